"""zerax.scipy.stats (JAX's jax.scipy.stats): values against SciPy 1.17.1 values recorded
as literals below (scipy.stats.<dist>.<method>(*args) on the arguments listed beside
them), derivatives by finite differences (check_grads to order 2), vmap and jit, and
clear errors."""

import math

import numpy as np
import pytest

import zerax
import zerax.numpy as znp
from zerax import errors
from zerax.scipy import stats
from zerax.test_util import check_grads

inf = np.inf

STATS_CASES = [
    ('norm', 'logpdf', ([-2.5, -0.3, 0.0, 0.7, 3.0], 0.5, 1.5,),
     [-3.324403641312837, -1.4666258635350593, -1.3799591968683926, -1.3332925302017258,
      -2.713292530201726]),
    ('norm', 'pdf', ([-2.5, -0.3, 0.0, 0.7, 3.0], 0.5, 1.5,),
     [0.035993977675458706, 0.23070259545128194, 0.2515888184619955, 0.26360789392387846,
      0.06631809252849911]),
    ('norm', 'cdf', ([-2.5, -0.3, 0.0, 0.7, 3.0], 0.5, 1.5,),
     [0.022750131948179195, 0.2969014286038512, 0.36944134018176367, 0.553035116623614,
      0.9522096477271853]),
    ('norm', 'logcdf', ([-2.5, -0.3, 0.0, 0.7, 3.0], 0.5, 1.5,),
     [-3.7831843336820317, -1.21435508548991, -0.9957633057792302, -0.5923337774441191,
      -0.048970050234415516]),
    ('norm', 'sf', ([-2.5, -0.3, 0.0, 0.7, 3.0], 0.5, 1.5,),
     [0.9772498680518208, 0.7030985713961488, 0.6305586598182363, 0.446964883376386,
      0.0477903522728147]),
    ('norm', 'logsf', ([-2.5, -0.3, 0.0, 0.7, 3.0], 0.5, 1.5,),
     [-0.023012909328963476, -0.35225818164347356, -0.46114909092111317, -0.8052752481338461,
      -3.040931495152975]),
    ('norm', 'ppf', ([0.01, 0.2, 0.5, 0.75, 0.99], 0.5, 1.5,),
     [-2.989521811061261, -0.7624318503593712, 0.5, 1.5117346252941226, 3.989521811061261]),
    ('norm', 'isf', ([0.01, 0.2, 0.5, 0.75, 0.99], 0.5, 1.5,),
     [3.989521811061261, 1.7624318503593712, 0.5, -0.5117346252941226, -2.989521811061261]),
    ('norm', 'logcdf', ([-40.0, -20.0, 5.0, 10.0, 30.0],),
     [-804.6084420137539, -203.9171553710973, -2.8665161296376294e-07, -7.61985302416047e-24,
      -4.906713927147908e-198]),
    ('t', 'logpdf', ([-2.5, -0.3, 0.0, 0.7, 3.0], [0.5, 1.0, 2.0, 4.0, 9.0], 0.2, 1.3,),
     [-3.271342984600974, -1.5450535944571457, -1.3197322976767885, -1.3339805449582822,
      -3.287587552412078]),
    ('t', 'pdf', ([-2.5, -0.3, 0.0, 0.7, 3.0], 3.0,),
     [0.0386614857271673, 0.34645357427454176, 0.36755259694786135, 0.2715883590882466,
      0.02297203730924134]),
    ('cauchy', 'logpdf', ([-2.5, -0.3, 0.0, 0.7, 3.0], 0.3, 2.0,),
     [-2.9230663347453145, -1.9240547626503979, -1.8601276753441653, -1.877097779562627,
      -2.8755000834510254]),
    ('cauchy', 'pdf', ([-2.5, -0.3, 0.0, 0.7, 3.0], 0.3, 2.0,),
     [0.05376856185537005, 0.14601370925861956, 0.15565275608009324, 0.15303359912682243,
      0.05638793377923661]),
    ('cauchy', 'cdf', ([-2.5, -0.3, 0.0, 0.7, 3.0], 0.3, 2.0,),
     [0.19743154328874657, 0.4072264209222577, 0.4526068577225104, 0.5628329581890013,
      0.7970619146278601]),
    ('cauchy', 'logcdf', ([-2.5, -0.3, 0.0, 0.7, 3.0], 0.3, 2.0,),
     [-1.6223633709857719, -0.8983859314640409, -0.7927313940580925, -0.574772394353124,
      -0.22682291860713139]),
    ('cauchy', 'sf', ([-2.5, -0.3, 0.0, 0.7, 3.0], 0.3, 2.0,),
     [0.8025684567112534, 0.5927735790777424, 0.5473931422774897, 0.43716704181099886,
      0.2029380853721398]),
    ('cauchy', 'logsf', ([-2.5, -0.3, 0.0, 0.7, 3.0], 0.3, 2.0,),
     [-0.21993812330308377, -0.5229427757004312, -0.6025880102627832, -0.8274399102171166,
      -1.594854344628549]),
    ('cauchy', 'ppf', ([0.01, 0.2, 0.5, 0.75, 0.99], 0.3, 2.0,),
     [-63.341031907547915, -2.4527638409423473, 0.3, 2.3000000000000003, 63.94103190754785]),
    ('cauchy', 'isf', ([0.01, 0.2, 0.5, 0.75, 0.99], 0.3, 2.0,),
     [63.94103190754791, 3.052763840942347, 0.3, -1.7000000000000004, -63.34103190754786]),
    ('logistic', 'logpdf', ([-2.5, -0.3, 0.0, 0.7, 3.0], 0.3, 2.0,),
     [-2.533982000396847, -2.1018576694969995, -2.0850612761390095, -2.089424919323129,
      -2.504164323287696]),
    ('logistic', 'pdf', ([-2.5, -0.3, 0.0, 0.7, 3.0], 0.3, 2.0,),
     [0.07934244874780733, 0.12222915584537296, 0.1242995033387715, 0.12375828635592999,
      0.08174388090774351]),
    ('logistic', 'cdf', ([-2.5, -0.3, 0.0, 0.7, 3.0], 0.3, 2.0,),
     [0.19781611144141825, 0.425557483188341, 0.46257015465625045, 0.549833997312478,
      0.7941296281990528]),
    ('logistic', 'sf', ([-2.5, -0.3, 0.0, 0.7, 3.0], 0.3, 2.0,),
     [0.8021838885585817, 0.574442516811659, 0.5374298453437496, 0.45016600268752216,
      0.20587037180094733]),
    ('logistic', 'ppf', ([0.01, 0.2, 0.5, 0.75, 0.99], 0.3, 2.0,),
     [-8.890239700269179, -2.4725887222397813, 0.3, 2.4972245773362194, 9.490239700269179]),
    ('logistic', 'isf', ([0.01, 0.2, 0.5, 0.75, 0.99], 0.3, 2.0,),
     [9.49023970026918, 3.072588722239781, 0.3, -1.8972245773362195, -8.890239700269177]),
    ('laplace', 'logpdf', ([-2.5, -0.3, 0.0, 0.7, 3.0], 0.3, 2.0,),
     [-2.7862943611198907, -1.6862943611198906, -1.5362943611198907, -1.5862943611198905,
      -2.736294361119891]),
    ('laplace', 'pdf', ([-2.5, -0.3, 0.0, 0.7, 3.0], 0.3, 2.0,),
     [0.06164924098540162, 0.18520455517042947, 0.21517699410626445, 0.20468268826949546,
      0.06481006516147288]),
    ('laplace', 'cdf', ([-2.5, -0.3, 0.0, 0.7, 3.0], 0.3, 2.0,),
     [0.12329848197080324, 0.37040911034085894, 0.4303539882125289, 0.5906346234610091,
      0.8703798696770543]),
    ('expon', 'logpdf', ([-2.5, -0.3, 0.0, 0.7, 3.0], -1.0, 2.0,),
     [-inf, -1.0431471805599453, -1.1931471805599454, -1.5431471805599453, -2.6931471805599454]),
    ('expon', 'pdf', ([-2.5, -0.3, 0.0, 0.7, 3.0], -1.0, 2.0,),
     [0.0, 0.3523440448593567, 0.3032653298563167, 0.21370746597436335, 0.06766764161830635]),
    ('expon', 'cdf', ([-2.5, -0.3, 0.0, 0.7, 3.0], -1.0, 2.0,),
     [0.0, 0.2953119102812866, 0.3934693402873666, 0.5725850680512733, 0.8646647167633873]),
    ('expon', 'logcdf', ([-2.5, -0.3, 0.0, 0.7, 3.0], -1.0, 2.0,),
     [-inf, -1.219723158227162, -0.9327521295671886, -0.5575939641096412, -0.14541345786885906]),
    ('expon', 'sf', ([-2.5, -0.3, 0.0, 0.7, 3.0], -1.0, 2.0,),
     [1.0, 0.7046880897187134, 0.6065306597126334, 0.4274149319487267, 0.1353352832366127]),
    ('expon', 'logsf', ([-2.5, -0.3, 0.0, 0.7, 3.0], -1.0, 2.0,),
     [0.0, -0.35, -0.5, -0.85, -2.0]),
    ('expon', 'ppf', ([0.01, 0.2, 0.5, 0.75, 0.99], -1.0, 2.0,),
     [-0.9798993282929971, -0.5537128973715805, 0.3862943611198906, 1.7725887222397811,
      8.210340371976182]),
    ('gamma', 'logpdf', ([0.05, 0.4, 1.0, 2.5, 8.0], [0.5, 1.0, 2.0, 4.0, 9.0], 0.0, 1.5,),
     [0.6894353064648799, -0.672131774774831, -1.4775968828829955, -2.3314143727049137,
      -2.951589875613375]),
    ('gamma', 'pdf', ([0.05, 0.4, 1.0, 2.5, 8.0], [0.5, 1.0, 2.0, 4.0, 9.0], 0.0, 1.5,),
     [1.9925900127875626, 0.5106188922430991, 0.22818538623670756, 0.09715823191232605,
      0.05225655844094537]),
    ('gamma', 'cdf', ([0.05, 0.4, 1.0, 2.5, 8.0], [0.5, 1.0, 2.0, 4.0, 9.0], 0.0, 1.5,),
     [0.20374658526236072, 0.23407166163535134, 0.14430480161234657, 0.08826715173473237,
      0.09203721306465135]),
    ('gamma', 'logcdf', ([0.05, 0.4, 1.0, 2.5, 8.0], [0.5, 1.0, 2.0, 4.0, 9.0], 0.0, 1.5,),
     [-1.5908782864501425, -1.4521279642033433, -1.9358275385490824, -2.427387248118366,
      -2.3855622938838894]),
    ('gamma', 'sf', ([0.05, 0.4, 1.0, 2.5, 8.0], [0.5, 1.0, 2.0, 4.0, 9.0], 0.0, 1.5,),
     [0.7962534147376392, 0.7659283383646487, 0.8556951983876534, 0.9117328482652676,
      0.9079627869353486]),
    ('gamma', 'logsf', ([0.05, 0.4, 1.0, 2.5, 8.0], [0.5, 1.0, 2.0, 4.0, 9.0], 0.0, 1.5,),
     [-0.22783778358045192, -0.2666666666666667, -0.15584104290067594, -0.09240826135373968,
      -0.09655188477207058]),
    ('gamma', 'logpdf', ([-2.5, -0.3, 0.0, 0.7, 3.0], 2.0, -1.0, 1.0,),
     [-inf, -1.0566749439387324, -1.0, -1.1693717489378295, -2.613705638880109]),
    ('beta', 'logpdf',
     ([0.01, 0.2, 0.5, 0.75, 0.99], [0.5, 1.0, 2.0, 4.0, 9.0], [0.05, 0.4, 1.0, 2.5, 8.0],),
     [-0.7490803758104332, -0.7824046010856293, 0.0, 0.6436319611209886, -20.774498146474635]),
    ('beta', 'pdf',
     ([0.01, 0.2, 0.5, 0.75, 0.99], [0.5, 1.0, 2.0, 4.0, 9.0], [0.05, 0.4, 1.0, 2.5, 8.0],),
     [0.47280115225274083, 0.4573050519273264, 1.0000000000000002, 1.90338134765625,
      9.500579373829923e-10]),
    ('beta', 'cdf',
     ([0.01, 0.2, 0.5, 0.75, 0.99], [0.5, 1.0, 2.0, 4.0, 9.0], [0.05, 0.4, 1.0, 2.5, 8.0],),
     [0.009396002558372172, 0.08538989614534732, 0.25, 0.746734619140625, 0.9999999999988017]),
    ('beta', 'logcdf',
     ([0.01, 0.2, 0.5, 0.75, 0.99], [0.5, 1.0, 2.0, 4.0, 9.0], [0.05, 0.4, 1.0, 2.5, 8.0],),
     [-4.66747093990239, -2.4605274973024143, -1.3862943611198906, -0.292045419164495,
      -1.1983110601860636e-12]),
    ('beta', 'sf',
     ([0.01, 0.2, 0.5, 0.75, 0.99], [0.5, 1.0, 2.0, 4.0, 9.0], [0.05, 0.4, 1.0, 2.5, 8.0],),
     [0.9906039974416279, 0.9146101038546527, 0.75, 0.253265380859375, 1.1983110601853457e-12]),
    ('beta', 'logsf',
     ([0.01, 0.2, 0.5, 0.75, 0.99], [0.5, 1.0, 2.0, 4.0, 9.0], [0.05, 0.4, 1.0, 2.5, 8.0],),
     [-0.009440423461997038, -0.08925742052568392, -0.2876820724517809, -1.3733174038007316,
      -27.450108000368]),
    ('beta', 'logpdf', ([-0.5, 0.3, 1.2, 2.5, 3.5], 2.0, 3.0, 0.5, 2.5,),
     [-inf, -inf, -0.3613578918431144, -1.8734034582685655, -inf]),
    ('chi2', 'logpdf', ([0.05, 0.4, 1.0, 2.5, 8.0], [0.5, 1.0, 2.0, 4.0, 9.0], 0.0, 1.0,),
     [0.7604898853274296, -0.6607931672675951, -1.1931471805599454, -1.7200036292457355,
      -2.2948534874827713]),
    ('chi2', 'pdf', ([0.05, 0.4, 1.0, 2.5, 8.0], [0.5, 1.0, 2.0, 4.0, 9.0], 0.0, 1.0,),
     [2.1393239872650605, 0.5164415474672784, 0.3032653298563167, 0.17906549803761884,
      0.10077615715519164]),
    ('chi2', 'cdf', ([0.05, 0.4, 1.0, 2.5, 8.0], [0.5, 1.0, 2.0, 4.0, 9.0], 0.0, 1.0,),
     [0.43651791018386915, 0.47291074313446196, 0.3934693402873665, 0.35536420706457217,
      0.4658537830903085]),
    ('chi2', 'logcdf', ([0.05, 0.4, 1.0, 2.5, 8.0], [0.5, 1.0, 2.0, 4.0, 9.0], 0.0, 1.0,),
     [-0.8289258731951727, -0.7488486120296322, -0.9327521295671887, -1.0346120800256053,
      -0.7638834642851285]),
    ('chi2', 'sf', ([0.05, 0.4, 1.0, 2.5, 8.0], [0.5, 1.0, 2.0, 4.0, 9.0], 0.0, 1.0,),
     [0.5634820898161308, 0.5270892568655381, 0.6065306597126334, 0.6446357929354278,
      0.5341462169096916]),
    ('chi2', 'logsf', ([0.05, 0.4, 1.0, 2.5, 8.0], [0.5, 1.0, 2.0, 4.0, 9.0], 0.0, 1.0,),
     [-0.573619729829728, -0.6403853769155965, -0.4999999999999999, -0.43906978378367106,
      -0.6270856630646492]),
    ('poisson', 'logpmf', ([0.0, 1.0, 2.0, 4.0, 7.0], 2.5,),
     [-2.5, -1.583709268125845, -1.3605657168116352, -2.0128909028513253, -4.611126237946329]),
    ('poisson', 'pmf', ([0.0, 1.0, 2.0, 4.0, 7.0], [0.05, 0.4, 1.0, 2.5, 8.0],),
     [0.951229424500714, 0.2681280184142557, 0.18393972058572114, 0.13360188578108528,
      0.13958653195059664]),
    ('poisson', 'cdf', ([0.0, 1.0, 2.0, 4.0, 7.0], 2.5,),
     [0.0820849986238988, 0.2872974951836458, 0.5438131158833297, 0.8911780189141513,
      0.9957533045106555]),
    ('poisson', 'logpmf', ([-1.0, 1.5, 3.0, 4.0, 5.0], 2.0, 1.0,),
     [-inf, -inf, -1.3068528194400546, -1.7123179275482192, -2.4054651081081646]),
    ('binom', 'logpmf', ([0.0, 1.0, 2.0, 4.0, 7.0], 7.0, 0.3,),
     [-2.496724607571127, -1.3981123189030173, -1.146797890622111, -2.330567987630528,
      -8.427809630281553]),
    ('binom', 'pmf', ([0.0, 1.0, 2.0, 4.0, 7.0], 8.0, [0.1, 0.3, 0.5, 0.7, 0.9],),
     [0.43046721, 0.19765032000000005, 0.10937500000000004, 0.13613670000000014,
      0.38263752000000006]),
    ('bernoulli', 'logpmf', ([0.0, 1.0, 0.0, 1.0, 2.0], [0.2, 0.2, 0.7, 0.7, 0.5],),
     [-0.22314355131420976, -1.6094379124341003, -1.203972804325936, -0.35667494393873245, -inf]),
    ('bernoulli', 'pmf', ([0.0, 1.0, 0.0, 1.0, -1.0], 0.3,),
     [0.7000000000000002, 0.3, 0.7000000000000002, 0.3, 0.0]),
    ('bernoulli', 'cdf', ([-1.0, 0.0, 0.5, 1.0, 2.0], 0.3,),
     [0.0, 0.7, 0.7, 1.0, 1.0]),
    ('bernoulli', 'ppf', ([0.1, 0.5, 0.69, 0.71, 1.0], 0.3,),
     [0.0, 0.0, 0.0, 1.0, 1.0]),
    ('geom', 'logpmf', ([0.0, 1.0, 2.0, 5.0, 9.0], 0.35,),
     [-inf, -1.0498221244986778, -1.480605040591132, -2.7729537888684948, -4.496085453238312]),
    ('geom', 'pmf', ([1.0, 2.0, 3.0, 4.0, 5.0], [0.1, 0.3, 0.5, 0.7, 0.9],),
     [0.1, 0.21, 0.125, 0.018900000000000007, 8.999999999999992e-05]),
    ('nbinom', 'logpmf', ([0.0, 1.0, 2.0, 4.0, 7.0], 3.0, 0.4,),
     [-2.748872195622465, -2.161085530720346, -1.9787639739263914, -2.0841244895842177,
      -2.741132623528291]),
    ('nbinom', 'pmf', ([0.0, 1.0, 2.0, 4.0, 7.0], 2.5, 0.6,),
     [0.278854800926934, 0.27885480092693415, 0.19519836064885387, 0.06441545901412177,
      0.008134752252640527]),
    ('uniform', 'logpdf', ([-2.5, -0.3, 0.0, 0.7, 3.0], -1.0, 3.0,),
     [-inf, -1.0986122886681098, -1.0986122886681098, -1.0986122886681098, -inf]),
    ('uniform', 'pdf', ([-2.5, -0.3, 0.0, 0.7, 3.0], -1.0, 3.0,),
     [0.0, 0.3333333333333333, 0.3333333333333333, 0.3333333333333333, 0.0]),
    ('uniform', 'cdf', ([-2.5, -0.3, 0.0, 0.7, 3.0], -1.0, 3.0,),
     [0.0, 0.2333333333333333, 0.3333333333333333, 0.5666666666666667, 1.0]),
    ('uniform', 'ppf', ([0.01, 0.2, 0.5, 0.75, 0.99], -1.0, 3.0,),
     [-0.97, -0.3999999999999999, 0.5, 1.25, 1.9699999999999998]),
    ('vonmises', 'logpdf', ([-2.5, -0.3, 0.0, 0.7, 3.0], [0.1, 0.5, 2.0, 10.0, 50.0],),
     [-1.920489867197915, -1.4217585410320235, -0.6618706078923016, -2.1324272766831567,
      -98.46507739830342]),
    ('vonmises', 'pdf', ([-2.5, -0.3, 0.0, 0.7, 3.0], 1.5,),
     [0.0290603709066152, 0.40508445593752196, 0.4331529265969693, 0.3044035005581451,
      0.021891580261589404]),
    ('gennorm', 'logpdf', ([-2.5, -0.3, 0.0, 0.7, 3.0], [0.5, 1.0, 1.5, 2.0, 8.0],),
     [-2.9674331912040803, -0.9931471805599452, -0.5908323475993045, -1.0623649429247,
      -6561.633123996434]),
    ('gennorm', 'pdf', ([-2.5, -0.3, 0.0, 0.7, 3.0], 1.2,),
     [0.026389730517680267, 0.41988677777381106, 0.5315440238969039, 0.27698991104911014,
      0.012661845814708188]),
    ('gennorm', 'cdf', ([-2.5, -0.3, 0.0, 0.7, 3.0], [0.5, 1.0, 1.5, 2.0, 8.0],),
     [0.2655226046253123, 0.370409110340859, 0.5, 0.8389005969187107, 1.0]),
    ('pareto', 'logpdf', ([1.0, 1.5, 2.0, 4.0, 9.0], 2.5, -0.5, 1.2,),
     [-0.04703325451953358, -1.0539205081007672, -1.8349229377005014, -3.8921762648579175,
      -6.5074266712636915]),
    ('pareto', 'pdf', ([1.0, 1.5, 2.0, 4.0, 9.0], 2.5, -0.5, 1.2,),
     [0.9540556703999103, 0.3485685011586675, 0.1596258024255477, 0.02040089993063989,
      0.0014923150033061838]),
    ('pareto', 'cdf', ([1.0, 1.5, 2.0, 4.0, 9.0], 2.5, -0.5, 1.2,),
     [0.4275665977600538, 0.721145199073066, 0.8403741975744523, 0.9632783801248482,
      0.9943292029874365]),
    ('pareto', 'logcdf', ([1.0, 1.5, 2.0, 4.0, 9.0], 2.5, -0.5, 1.2,),
     [-0.8496452185043819, -0.32691477629563204, -0.17390801303563244, -0.037412833023987166,
      -0.0056869370287017254]),
    ('pareto', 'sf', ([1.0, 1.5, 2.0, 4.0, 9.0], 2.5, -0.5, 1.2,),
     [0.5724334022399462, 0.278854800926934, 0.1596258024255477, 0.0367216198751518,
      0.005670797012563499]),
    ('pareto', 'logsf', ([1.0, 1.5, 2.0, 4.0, 9.0], 2.5, -0.5, 1.2,),
     [-0.5578588782855243, -1.277064059414977, -1.8349229377005014, -3.304389599955799,
      -5.172425604531352]),
    ('pareto', 'ppf', ([0.01, 0.2, 0.5, 0.75, 0.99], 2.5, -0.5, 1.2,),
     [0.704833871105089, 0.8120344887319337, 1.083409492927473, 1.589321351910698,
      7.071488133762316]),
    ('truncnorm', 'logpdf', ([-2.5, -0.3, 0.0, 0.7, 3.0], -1.0, 2.0, 0.1, 1.4,),
     [-inf, -1.0960608020320353, -1.057795495909586, -1.1470812101953005, -inf]),
    ('truncnorm', 'pdf', ([-2.5, -0.3, 0.0, 0.7, 3.0], -1.0, 2.0, 0.1, 1.4,),
     [0.0, 0.33418491481608903, 0.3472204160596519, 0.31756231563370935, 0.0]),
    ('truncnorm', 'cdf', ([-2.5, -0.3, 0.0, 0.7, 3.0], -1.0, 2.0, 0.1, 1.4,),
     [0.0, 0.2796173138916835, 0.38220759843169516, 0.6196317034359783, 1.0]),
    ('truncnorm', 'logcdf', ([-2.5, -0.3, 0.0, 0.7, 3.0], -1.0, 2.0, 0.1, 1.4,),
     [-inf, -1.2743333467496825, -0.9617913665999183, -0.47863000416293566, 0.0]),
    ('truncnorm', 'sf', ([-2.5, -0.3, 0.0, 0.7, 3.0], -1.0, 2.0, 0.1, 1.4,),
     [1.0, 0.7203826861083166, 0.617792401568305, 0.3803682965640217, 0.0]),
    ('truncnorm', 'logsf', ([-2.5, -0.3, 0.0, 0.7, 3.0], -1.0, 2.0, 0.1, 1.4,),
     [0.0, -0.32797269968886655, -0.48160279775052506, -0.9666152941499433, -inf]),
    ('truncnorm', 'logpdf', ([6.1, 6.5, 7.0, 8.0, 9.0], 6.0, 10.0,),
     [1.2128304167700463, -1.3071695832299568, -4.682169583229957, -12.182169583229957,
      -20.682169583229957]),
    ('truncnorm', 'logcdf', ([6.1, 6.5, 7.0, 8.0, 9.0], 6.0, 10.0,),
     [-0.7712215213994931, -0.04155764915238024, -0.0012980533077556436, -6.305534526696634e-07,
      -1.1438539831350012e-10]),
    ('truncnorm', 'logsf', ([-9.0, -8.0, -7.0, -6.5, -6.1], -10.0, -6.0,),
     [-1.1438539831350012e-10, -6.305534526696634e-07, -0.0012980533077556436,
      -0.04155764915238024, -0.7712215213994931]),
    ('gumbel_r', 'logpdf', ([-2.5, -0.3, 0.0, 0.7, 3.0], 0.3, 1.5,),
     [-5.0055031921371675, -1.4972898057494348, -1.4268678662683343, -1.4380601131394797,
      -2.370763996329751]),
    ('gumbel_r', 'pdf', ([-2.5, -0.3, 0.0, 0.7, 3.0], 0.3, 1.5,),
     [0.006700968625012676, 0.22373570642896332, 0.2400596448594847, 0.2373878178151423,
      0.09340933462123403]),
    ('gumbel_r', 'cdf', ([-2.5, -0.3, 0.0, 0.7, 3.0], 0.3, 1.5,),
     [0.0015543392384564504, 0.22496179354991847, 0.29481632072915814, 0.4649021440869935,
      0.8476403165157733]),
    ('gumbel_r', 'logcdf', ([-2.5, -0.3, 0.0, 0.7, 3.0], 0.3, 1.5,),
     [-6.466704750695669, -1.4918246976412703, -1.2214027581601699, -0.7659283383646487,
      -0.16529888822158653]),
    ('gumbel_r', 'sf', ([-2.5, -0.3, 0.0, 0.7, 3.0], 0.3, 1.5,),
     [0.9984456607615435, 0.7750382064500816, 0.7051836792708419, 0.5350978559130065,
      0.15235968348422668]),
    ('gumbel_r', 'logsf', ([-2.5, -0.3, 0.0, 0.7, 3.0], 0.3, 1.5,),
     [-0.0015555484768974975, -0.2548429521986618, -0.3492969721311667, -0.6253056405631944,
      -1.8815112147942994]),
    ('gumbel_r', 'ppf', ([0.01, 0.2, 0.5, 0.75, 0.99], 0.3, 1.5,),
     [-1.9907694387118517, -0.41382749299066585, 0.8497693808724964, 2.168848985560857,
      7.200223840164868]),
    ('gumbel_l', 'logpdf', ([-2.5, -0.3, 0.0, 0.7, 3.0], 0.3, 1.5,),
     [-2.4267700393240856, -1.4757851541438036, -1.4241958611861463, -1.44440361350645,
      -4.655112572521111]),
    ('gumbel_l', 'pdf', ([-2.5, -0.3, 0.0, 0.7, 3.0], 0.3, 1.5,),
     [0.08832164781302847, 0.2285991709784879, 0.24070194318062, 0.23588671426487548,
      0.009512842297044969]),
    ('gumbel_l', 'cdf', ([-2.5, -0.3, 0.0, 0.7, 3.0], 0.3, 1.5,),
     [0.14327497074732853, 0.4884551663109584, 0.5590089740570173, 0.7289915213512108,
      0.9976413066167068]),
    ('gumbel_l', 'logcdf', ([-2.5, -0.3, 0.0, 0.7, 3.0], 0.3, 1.5,),
     [-1.9429896227158554, -0.7165075899896719, -0.5815897521866364, -0.3160931775607149,
      -0.0023614794824293643]),
    ('gumbel_l', 'sf', ([-2.5, -0.3, 0.0, 0.7, 3.0], 0.3, 1.5,),
     [0.8567250292526715, 0.5115448336890416, 0.4409910259429827, 0.27100847864878913,
      0.0023586933832932255]),
    ('gumbel_l', 'logsf', ([-2.5, -0.3, 0.0, 0.7, 3.0], 0.3, 1.5,),
     [-0.15463826454925483, -0.6703200460356393, -0.8187307530779818, -1.3056051720649522,
      -6.0496474644129465]),
    ('gumbel_l', 'ppf', ([0.01, 0.2, 0.5, 0.75, 0.99], 0.3, 1.5,),
     [-6.60022384016487, -1.9499099801392734, -0.2497693808724965, 0.7899513899674213,
      2.5907694387118516]),
    ('wrapcauchy', 'logpdf', ([0.0, 0.5, 2.0, 4.0, 6.0], [0.1, 0.3, 0.5, 0.7, 0.9],),
     [-1.6372063709471945, -1.3585118867815649, -2.6360728159050826, -3.388813546966976,
      -0.9938272380914063]),
    ('wrapcauchy', 'pdf', ([0.0, 0.5, 2.0, 4.0, 6.0], 0.4,),
     [0.37136153388108906, 0.2919419974317506, 0.08954959329764858, 0.0794396391998589,
      0.341164869529275]),
    ('betabinom', 'logpmf', ([0.0, 1.0, 2.0, 4.0, 7.0], 7.0, 2.3, 0.8,),
     [-4.267491610209688, -3.405594950401331, -2.8709181108131614, -2.137387628435763,
      -1.1423187243398618]),
    ('betabinom', 'pmf', ([0.0, 1.0, 2.0, 4.0, 7.0], 9.0, 1.5, 4.0,),
     [0.18095681856618726, 0.20357642088696062, 0.1850694735336006, 0.11335505253933044,
      0.02584466280791494]),
]
MVN_COV = [
    [13.871581257951208, -0.0920928036372215, -3.891631438097269],
    [-0.0920928036372215, 3.5737358440231075, 1.438408240200998],
    [-3.891631438097269, 1.438408240200998, 7.882730257104129],
]
MVN_MEAN = (
    [3.3229995166448827, 0.22578661322792176, -0.3526307943415954]
)
MVN_X = [
    [-0.2812874181513504, -0.6680463461089501, -1.0551505512051214],
    [-0.39080097723465473, 0.48194538850678587, -0.2385536065733667],
    [0.9577587029597641, -0.19980212906658, 0.024259565076664623],
    [1.545820851212812, 0.5451055226876446, -0.505228735614018],
]
MVN_LOGPDF = (
    [-6.355863793101898, -6.211346273278388, -5.853255397113953, -5.798328557996547]
)
MVN_LOGPDF_SCALAR_COV = (
    [-6.9879228326899145, -6.905440703677525, -5.314758942887667, -4.78797463872246]
)
DIR_ALPHA = (
    [0.7, 2.0, 3.5]
)
DIR_X = [
    [0.2, 0.5, 0.1],
    [0.3, 0.1, 0.6],
    [0.5, 0.4, 0.3],
]
DIR_LOGPDF = (
    [1.2164485569629844, -0.7149098295528948, 0.8404758322759367]
)


@pytest.mark.parametrize("dist,method,args,want", STATS_CASES,
                         ids=[f"{c[0]}.{c[1]}-{i}" for i, c in enumerate(STATS_CASES)])
def test_values_match_scipy(dist, method, args, want):
    got = getattr(getattr(stats, dist), method)(*args)
    assert got.dtype == np.float64
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-10, atol=1e-300)


def test_multivariate_values():
    got = stats.multivariate_normal.logpdf(np.array(MVN_X), np.array(MVN_MEAN),
                                           np.array(MVN_COV))
    np.testing.assert_allclose(np.asarray(got), MVN_LOGPDF, rtol=1e-12)
    got = stats.multivariate_normal.logpdf(np.array(MVN_X), np.array(MVN_MEAN), 2.5)
    np.testing.assert_allclose(np.asarray(got), MVN_LOGPDF_SCALAR_COV, rtol=1e-12)
    # one cov per point (a batch of matrices) equals the shared one
    covs = np.broadcast_to(np.array(MVN_COV), (4, 3, 3))
    got = stats.multivariate_normal.pdf(np.array(MVN_X), np.array(MVN_MEAN), covs)
    np.testing.assert_allclose(np.asarray(got), np.exp(MVN_LOGPDF), rtol=1e-12)
    # scalar mean: the univariate normal
    np.testing.assert_allclose(
        float(stats.multivariate_normal.logpdf(0.3, 0.1, 4.0)),
        float(stats.norm.logpdf(0.3, 0.1, 2.0)), rtol=1e-14)
    x = np.array(DIR_X)
    np.testing.assert_allclose(np.asarray(stats.dirichlet.logpdf(x, np.array(DIR_ALPHA))),
                               DIR_LOGPDF, rtol=1e-12)
    # the last coordinate may be left out
    np.testing.assert_allclose(np.asarray(stats.dirichlet.logpdf(x[:2], np.array(DIR_ALPHA))),
                               DIR_LOGPDF, rtol=1e-12)
    off = np.array([0.5, 0.6, 0.1])
    assert float(stats.dirichlet.logpdf(off, np.array(DIR_ALPHA))) == -np.inf


def test_multinomial():
    # scipy.stats.multinomial.logpmf(x, 3, [0.2, 0.5, 0.3]) recorded with scipy 1.17.1
    x = np.array([[2, 1, 0], [1, 1, 1], [0, 0, 3], [1, 1, 0]])
    p = np.array([0.2, 0.5, 0.3])
    np.testing.assert_allclose(
        np.asarray(stats.multinomial.logpmf(x, 3, p)),
        [-2.813410716760036, -1.7147984280919268, -3.611918412977809, -np.inf], rtol=1e-13)
    np.testing.assert_allclose(float(stats.multinomial.pmf(x[1], 3, p)),
                               math.exp(-1.7147984280919268), rtol=1e-13)
    check_grads(lambda q: stats.multinomial.logpmf(x[0], 3, q), (p,), order=2,
                modes=("fwd", "rev"))
    with pytest.raises(errors.ZeraxTypeError, match="integer"):
        stats.multinomial.logpmf(x.astype(float), 3, p)


def test_poisson_entropy():
    # scipy.stats.poisson.entropy, scipy 1.17.1
    mu = np.array([0.0, 1e-3, 0.5, 1.0, 5.0, 30.0, 99.0, 101.0, 1000.0])
    want = [0.0, 0.007908101804632452, 0.9276374674957975, 1.3048422422562516,
            2.204395243428367, 3.1167110399882496, 3.7156524005613534, 3.7256695722096596,
            4.872732797641551]
    np.testing.assert_allclose(np.asarray(stats.poisson.entropy(mu)), want, rtol=1e-8)
    np.testing.assert_allclose(np.asarray(stats.poisson.entropy(mu[:7])), want[:7], rtol=1e-13)
    assert math.isnan(float(stats.poisson.entropy(-1.0)))
    # far out, the asymptotic series (SciPy's own sum does not converge at 1e6)
    np.testing.assert_allclose(float(stats.poisson.entropy(1e6)),
                               0.5 * math.log(2 * math.pi * math.e * 1e6) - 1 / 12e6,
                               rtol=1e-13)
    check_grads(stats.poisson.entropy, (3.5,), order=2, modes=("fwd", "rev"))
    check_grads(stats.poisson.entropy, (150.0,), order=2, modes=("fwd", "rev"))


def test_float32_stays_float32():
    x = np.array([0.3, 1.2], np.float32)
    for f in (stats.norm.logpdf, stats.norm.cdf, stats.expon.sf, stats.logistic.pdf):
        assert f(x).dtype == np.float32
    assert stats.gamma.cdf(x, np.float32(2.0) * np.ones(2, np.float32)).dtype == np.float32
    np.testing.assert_allclose(np.asarray(stats.norm.cdf(x)), [0.6179114, 0.8849303], rtol=1e-6)


# --------------------------------------------------------------------------- derivatives

GRAD_CASES = [
    (stats.norm.logpdf, (0.4, 0.1, 1.3)), (stats.norm.logcdf, (-3.0, 0.2, 0.9)),
    (stats.norm.logsf, (2.0, 0.2, 0.9)), (stats.norm.ppf, (0.3, 0.5, 2.0)),
    (stats.norm.isf, (0.8, 0.5, 2.0)),
    (stats.t.logpdf, (0.4, 3.5, 0.1, 1.3)), (stats.cauchy.logpdf, (0.4, 0.1, 1.3)),
    (stats.cauchy.cdf, (0.4, 0.1, 1.3)), (stats.cauchy.ppf, (0.3, 0.1, 1.3)),
    (stats.logistic.logpdf, (0.4, 0.1, 1.3)), (stats.logistic.cdf, (0.4, 0.1, 1.3)),
    (stats.logistic.ppf, (0.3, 0.1, 1.3)), (stats.laplace.logpdf, (0.4, 0.1, 1.3)),
    (stats.laplace.cdf, (0.4, 0.1, 1.3)), (stats.laplace.cdf, (-0.4, 0.1, 1.3)),
    (stats.expon.logpdf, (0.4, 0.1, 1.3)), (stats.expon.logcdf, (0.4, 0.1, 1.3)),
    (stats.expon.ppf, (0.3, 0.1, 1.3)),
    (stats.gamma.logpdf, (1.4, 2.5, 0.1, 1.3)), (stats.chi2.logpdf, (1.4, 3.0, 0.1, 1.3)),
    (stats.beta.logpdf, (0.4, 2.5, 1.7)), (stats.pareto.logpdf, (2.4, 2.5, 0.1, 1.3)),
    (stats.pareto.cdf, (2.4, 2.5, 0.1, 1.3)), (stats.pareto.ppf, (0.3, 2.5, 0.1, 1.3)),
    (stats.vonmises.logpdf, (0.4, 2.5)), (stats.gennorm.logpdf, (0.4, 1.7)),
    (stats.gumbel_r.logpdf, (0.4, 0.1, 1.3)), (stats.gumbel_r.logsf, (0.4, 0.1, 1.3)),
    (stats.gumbel_l.logpdf, (0.4, 0.1, 1.3)), (stats.gumbel_l.logcdf, (0.4, 0.1, 1.3)),
    (stats.wrapcauchy.logpdf, (0.4, 0.6)), (stats.uniform.logpdf, (0.4, -1.0, 3.0)),
    (stats.truncnorm.logpdf, (0.4, -1.0, 2.0, 0.1, 1.3)),
    (stats.truncnorm.logcdf, (0.4, -1.0, 2.0, 0.1, 1.3)),
    (stats.truncnorm.logsf, (0.4, -1.0, 2.0, 0.1, 1.3)),
    (stats.poisson.logpmf, (3.0, 2.5)), (stats.binom.logpmf, (3.0, 7.0, 0.3)),
    (stats.nbinom.logpmf, (3.0, 2.5, 0.4)), (stats.geom.logpmf, (3.0, 0.4)),
    (stats.bernoulli.logpmf, (1.0, 0.3)), (stats.betabinom.logpmf, (3.0, 7.0, 2.3, 0.8)),
]


@pytest.mark.parametrize("f,args", GRAD_CASES,
                         ids=[f"{c[0].__module__.rsplit('.', 1)[1]}.{c[0].__name__}"
                              for c in GRAD_CASES])
def test_check_grads(f, args):
    # discrete distributions: in their real-valued parameters only (k stays fixed)
    if f.__name__ == "logpmf":
        check_grads(lambda *p: f(args[0], *p), args[1:], order=2, modes=("fwd", "rev"))
    else:
        check_grads(f, args, order=2, modes=("fwd", "rev"))


def test_cdf_derivatives_are_densities():
    pairs = [(stats.gamma, (2.5,)), (stats.chi2, (3.0,)), (stats.beta, (2.5, 1.7)),
             (stats.norm, ()), (stats.truncnorm, (-1.0, 2.0)), (stats.gennorm, (1.7,))]
    for dist, params in pairs:
        x = 0.4
        g = zerax.grad(dist.cdf)(x, *params)
        np.testing.assert_allclose(float(g), float(dist.pdf(x, *params)), rtol=1e-10)
        check_grads(lambda v: dist.cdf(v, *params), (x,), order=2, modes=("fwd", "rev"))
    # gamma.cdf in its shape parameter (first order: igamma_grad_a)
    check_grads(lambda a: stats.gamma.cdf(1.4, a), (2.5,), order=1, modes=("fwd", "rev"))
    check_grads(lambda mu: stats.poisson.cdf(3.0, mu), (2.5,), order=2, modes=("fwd", "rev"))


def test_multivariate_derivatives():
    cov = np.array(MVN_COV)
    mean = np.array(MVN_MEAN)
    x = np.array(MVN_X[0])
    check_grads(lambda x, m, c: stats.multivariate_normal.logpdf(x, m, c @ c.T),
                (x, mean, np.linalg.cholesky(cov)), order=2, modes=("fwd", "rev"))
    # d/dx log N(x; m, C) = -C^-1 (x - m)
    g = zerax.grad(stats.multivariate_normal.logpdf)(x, mean, cov)
    np.testing.assert_allclose(np.asarray(g), -np.linalg.solve(cov, x - mean), rtol=1e-12)
    alpha = np.array(DIR_ALPHA)
    check_grads(lambda a: stats.dirichlet.logpdf(np.array(DIR_X), a), (alpha,), order=2,
                modes=("fwd", "rev"))


# --------------------------------------------------------------------------- transforms

def test_vmap_and_jit():
    xs = np.array([-1.2, 0.3, 2.2])
    scales = np.array([0.5, 1.0, 3.0])

    def f(x, s):
        return (stats.norm.logpdf(x, 0.1, s) + stats.t.logpdf(x, 4.0, 0.0, s)
                + stats.gamma.cdf(s, 2.0) + stats.truncnorm.logcdf(x, -2.0, 2.5)
                + stats.beta.cdf(s / 4.0, 2.0, 3.0) + stats.poisson.logpmf(2.0, s))

    want = np.array([float(f(x, s)) for x, s in zip(xs, scales)])
    np.testing.assert_allclose(np.asarray(zerax.vmap(f)(xs, scales)), want, rtol=1e-12)
    gv = zerax.vmap(zerax.grad(f, argnums=(0, 1)))(xs, scales)
    for i in range(3):
        gi = zerax.grad(f, argnums=(0, 1))(xs[i], scales[i])
        np.testing.assert_allclose([float(gv[0][i]), float(gv[1][i])],
                                   [float(gi[0]), float(gi[1])], rtol=1e-11)

    # under jit: a smaller program (Numba compiles are slow)
    def f_small(x, s):
        return (stats.norm.logpdf(x, 0.1, s) + stats.gamma.cdf(s, 2.0)
                + stats.poisson.logpmf(2.0, s) + stats.beta.logpdf(s / 4.0, 2.0, 3.0))

    got = zerax.jit(lambda xs, ss: (zerax.vmap(f_small)(xs, ss),
                                    zerax.grad(f_small, argnums=(0, 1))(xs[1], ss[1])))(
        xs, scales)
    np.testing.assert_allclose(np.asarray(got[0]),
                               [float(f_small(x, s)) for x, s in zip(xs, scales)], rtol=1e-12)
    ge = zerax.grad(f_small, argnums=(0, 1))(xs[1], scales[1])
    np.testing.assert_allclose([float(got[1][0]), float(got[1][1])],
                               [float(ge[0]), float(ge[1])], rtol=1e-12)
    # multivariate normal of a batch, under vmap over means and jit
    cov = np.array(MVN_COV)
    means = np.array(MVN_X)
    x = np.array(MVN_MEAN)
    f_mvn = zerax.jit(zerax.vmap(lambda m: stats.multivariate_normal.logpdf(x, m, cov)))
    np.testing.assert_allclose(np.asarray(f_mvn(means)),
                               [float(stats.multivariate_normal.logpdf(x, m, cov))
                                for m in means], rtol=1e-12)


def test_errors():
    with pytest.raises(errors.ShapeError, match="alpha must be one-dimensional"):
        stats.dirichlet.logpdf(np.ones(3) / 3, np.ones((3, 1)))
    with pytest.raises(errors.ShapeError, match="one fewer"):
        stats.dirichlet.logpdf(np.ones(5) / 5, np.ones(3))
    with pytest.raises(errors.NotSupportedError, match="allow_singular"):
        stats.multivariate_normal.logpdf(np.zeros(2), np.zeros(2), np.eye(2),
                                         allow_singular=True)
    with pytest.raises(errors.ShapeError, match="cov must have shape"):
        stats.multivariate_normal.logpdf(np.zeros(2), np.zeros(2), np.eye(3))
    with pytest.raises(errors.NotSupportedError, match="complex"):
        stats.norm.pdf(1j)
    # out-of-support parameters give nan, as JAX
    assert math.isnan(float(stats.vonmises.logpdf(0.0, -1.0)))
    assert math.isnan(float(stats.truncnorm.logpdf(0.0, 1.0, -1.0)))
    assert math.isnan(float(stats.wrapcauchy.logpdf(0.3, 1.5)))


def test_rankdata_and_sem():
    a = np.array([[3.0, 1.0, 3.0, 2.0, 7.0], [5.0, 5.0, 5.0, 1.0, 0.0]])
    # scipy.stats.rankdata(a, method) flattened and along axis 1, scipy 1.17.1
    want = {
        "average": ([5.5, 2.5, 5.5, 4.0, 10.0, 8.0, 8.0, 8.0, 2.5, 1.0],
                    [[3.5, 1.0, 3.5, 2.0, 5.0], [4.0, 4.0, 4.0, 2.0, 1.0]]),
        "min": ([5, 2, 5, 4, 10, 7, 7, 7, 2, 1], [[3, 1, 3, 2, 5], [3, 3, 3, 2, 1]]),
        "max": ([6, 3, 6, 4, 10, 9, 9, 9, 3, 1], [[4, 1, 4, 2, 5], [5, 5, 5, 2, 1]]),
        "dense": ([4, 2, 4, 3, 6, 5, 5, 5, 2, 1], [[3, 1, 3, 2, 4], [3, 3, 3, 2, 1]]),
        "ordinal": ([5, 2, 6, 4, 10, 7, 8, 9, 3, 1], [[3, 1, 4, 2, 5], [3, 4, 5, 2, 1]]),
    }
    for method, (flat, rows) in want.items():
        got = stats.rankdata(a, method)
        assert got.dtype == np.float64          # JAX's dtype for every method
        np.testing.assert_array_equal(np.asarray(got), flat)
        np.testing.assert_array_equal(np.asarray(stats.rankdata(a, method, axis=1)), rows)
        np.testing.assert_array_equal(np.asarray(stats.rankdata(a.T, method, axis=0)),
                                      np.array(rows).T)
    # under vmap (jit works too, but its sort kernels take half a minute to compile)
    got = zerax.vmap(lambda v: stats.rankdata(v, "min"))(a)
    np.testing.assert_array_equal(np.asarray(got), want["min"][1])
    assert np.isnan(np.asarray(stats.rankdata([1.0, np.nan, 0.0]))).all()
    with pytest.raises(errors.ZeraxValueError, match="method"):
        stats.rankdata(a, "bogus")
    with pytest.raises(errors.NotSupportedError, match="nan_policy"):
        stats.rankdata(a, nan_policy="omit")
    # scipy.stats.sem: axis=1, axis=None, axis=0 with ddof=0, and nan_policy="omit"
    np.testing.assert_allclose(np.asarray(stats.sem(a, axis=1)),
                               [1.019803902718557, 1.1135528725660042], rtol=1e-14)
    np.testing.assert_allclose(float(stats.sem(a, axis=None)), 0.7118052168020874, rtol=1e-14)
    np.testing.assert_allclose(
        np.asarray(stats.sem(a, axis=0, ddof=0)),
        [0.7071067811865475, 1.414213562373095, 0.7071067811865475, 0.35355339059327373,
         2.4748737341529163], rtol=1e-14)
    np.testing.assert_allclose(float(stats.sem([1.0, np.nan, 3.0, 4.0], nan_policy="omit")),
                               0.8819171036881969, rtol=1e-14)
    check_grads(lambda v: stats.sem(v, axis=1), (a,), order=2, modes=("fwd", "rev"))


# ----------------------------------------------------------------- invariants (hypothesis)

from hypothesis import given, settings, strategies as st  # noqa: E402

_QUANTILE_DISTS = [
    ("norm", ()), ("cauchy", ()), ("logistic", ()), ("expon", ()), ("gumbel_r", ()),
    ("gumbel_l", ()), ("uniform", ()), ("pareto", (2.5,)),
]


@given(q=st.floats(0.02, 0.98), loc=st.floats(-3.0, 3.0), scale=st.floats(0.2, 5.0),
       which=st.sampled_from(range(len(_QUANTILE_DISTS))))
@settings(max_examples=25, deadline=None)
def test_quantile_and_tail_identities(q, loc, scale, which):
    name, shape = _QUANTILE_DISTS[which]
    d = getattr(stats, name)
    x = d.ppf(q, *shape, loc, scale)
    np.testing.assert_allclose(float(d.cdf(x, *shape, loc, scale)), q, rtol=1e-10)
    if hasattr(d, "sf"):
        np.testing.assert_allclose(float(d.cdf(x, *shape, loc, scale))
                                   + float(d.sf(x, *shape, loc, scale)), 1.0, rtol=1e-12)
    if hasattr(d, "logcdf"):
        np.testing.assert_allclose(float(d.logcdf(x, *shape, loc, scale)), math.log(q),
                                   rtol=1e-9)
    # the density is the derivative of the CDF
    np.testing.assert_allclose(float(zerax.grad(d.cdf)(x, *shape, loc, scale)),
                               float(d.pdf(x, *shape, loc, scale)), rtol=1e-9)


def test_mode():
    a = np.array([[3, 1, 3, 2, 7], [5, 5, 5, 1, 0], [2, 2, 1, 1, 0]])
    # scipy.stats.mode (and jax.scipy.stats.mode), recorded
    cases = [({"axis": 0}, [2, 1, 1, 1, 0], [1, 1, 1, 2, 2]),
             ({"axis": 1}, [3, 5, 1], [2, 3, 2]),
             ({"axis": None}, 1, 4),
             ({"axis": 1, "keepdims": True}, [[3], [5], [1]], [[2], [3], [2]])]
    for kw, m, c in cases:
        got = stats.mode(a, **kw)
        assert isinstance(got, stats.ModeResult)
        np.testing.assert_array_equal(np.asarray(got.mode), m)
        np.testing.assert_array_equal(np.asarray(got.count), c)
        assert got.mode.dtype == np.int64
    got = stats.mode(np.array([1.5, 2.5, 2.5, 1.5, 0.5]))
    assert float(got.mode) == 1.5 and int(got.count) == 2
    got = zerax.vmap(lambda r: stats.mode(r).mode)(a)
    np.testing.assert_array_equal(np.asarray(got), [3, 5, 1])


# recorded with scipy 1.17.1 (scipy.stats.gaussian_kde on the data below)
KDE_DATA2 = [[0.001, 0.299, -0.274, -0.891, -0.455, -0.992, 0.06, 1.34, -0.492, -0.62, 0.49, 0.357,
  0.105, -0.93, -0.029],
 [0.695, -1.344, -0.458, -1.901, -1.29, -1.842, -0.235, -1.267, 0.271, 0.157, -0.187,
  -2.517, -0.539, -0.049, 0.113]]
KDE_W = [1.245, 0.871, 0.518, 0.789, 1.538, 0.801, 1.054, 0.506, 1.745, 0.732, 0.901, 1.82,
 1.265, 1.771, 1.46]
KDE_PTS2 = [[1.359, -1.547, 0.859, 0.119], [-0.641, 2.0, 0.762, -1.199]]
KDE_DATA1 = [0.075, 0.577, -0.189, 0.683, -0.067, 0.667, 1.439, -0.676, 0.203, -0.463, 0.127,
 -1.187]
KDE_PTS1 = [-1.0, 0.0, 0.4, 2.5]
KDE2_EVAL = [0.014826926181375606, 0.0004430606909685586, 0.010445435048539252, 0.12471020143887666]
KDE2_LOGPDF = [-4.211310414620838, -7.721803797373745, -4.5615902334729554, -2.0817626217923726]
KDE2_COV = [[0.13212453352318532, -0.040910157455586585],
 [-0.040910157455586585, 0.4339986800850065]]
KDE1_EVAL = [0.19411528590077076, 0.5016000986136958, 0.4719820253801881, 0.004666416534298373]
KDE1B_EVAL = [0.16069654155320687, 0.6561533296828637, 0.47941844009698303, 4.4390314424446935e-07]
KDE1_BOX = 0.6410344141936664
KDE2_GAUSS = 0.09378698975403728
KDE1_KDE = 0.37477419956838803


def test_gaussian_kde():
    k2 = stats.gaussian_kde(np.array(KDE_DATA2), weights=np.array(KDE_W))
    np.testing.assert_allclose(np.asarray(k2.covariance), KDE2_COV, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(k2.evaluate(np.array(KDE_PTS2))), KDE2_EVAL,
                               rtol=1e-12)
    np.testing.assert_allclose(np.asarray(k2.logpdf(np.array(KDE_PTS2))), KDE2_LOGPDF,
                               rtol=1e-12)
    np.testing.assert_allclose(
        float(k2.integrate_gaussian(np.array([0.1, -0.2]),
                                    np.array([[1.0, 0.2], [0.2, 0.5]]))), KDE2_GAUSS,
        rtol=1e-12)
    k1 = stats.gaussian_kde(np.array(KDE_DATA1), bw_method="silverman")
    k1b = stats.gaussian_kde(np.array(KDE_DATA1), bw_method=0.3)
    np.testing.assert_allclose(np.asarray(k1(np.array(KDE_PTS1))), KDE1_EVAL, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(k1b.pdf(np.array(KDE_PTS1))), KDE1B_EVAL, rtol=1e-12)
    np.testing.assert_allclose(float(k1.integrate_box_1d(-0.5, 1.0)), KDE1_BOX, rtol=1e-12)
    np.testing.assert_allclose(float(k1.integrate_kde(k1b)), KDE1_KDE, rtol=1e-12)
    # a pytree: through jit, and differentiable in the data and the points
    f = zerax.jit(lambda kde, x: kde.logpdf(x))
    np.testing.assert_allclose(np.asarray(f(k1, np.array(KDE_PTS1))),
                               np.log(KDE1_EVAL), rtol=1e-12)
    check_grads(lambda d, x: stats.gaussian_kde(d, bw_method=0.5).logpdf(x),
                (np.array(KDE_DATA1), np.array(KDE_PTS1)), order=2, modes=("fwd", "rev"))
    draws = k1.resample(zerax.random.key(0), (500,))
    assert draws.shape == (1, 500)
    assert abs(float(znp.mean(draws)) - float(np.mean(KDE_DATA1))) < 0.2
    with pytest.raises(errors.ShapeError, match="weights"):
        stats.gaussian_kde(np.array(KDE_DATA1), weights=np.ones(3))
    with pytest.raises(errors.ZeraxValueError, match="bw_method"):
        stats.gaussian_kde(np.array(KDE_DATA1), bw_method="bogus")


# --------------------------------------------------------------------------- t's CDF, mvn entropy
# SciPy 1.17.1's values (recorded).
T_Z = [-1e10, -1e3, -40.0, -5.0, -1.0, -1e-3, 0.0, 1e-3, 0.5, 1.0, 3.0, 40.0, 1e3, np.inf,
       -np.inf]
T_CDF = {
    0.7: [3.108290053511022e-08, 0.0024690021703500883, 0.02349836693938258, 0.10013683482091146,
          0.27519333625998565, 0.4997053638242668, 0.5, 0.5002946361757332, 0.634799156658835,
          0.7248066637400143, 0.8583143303494871, 0.9765016330606174, 0.9975309978296499, 1.0,
          0.0],
    3.0: [1.1026577908435839e-30, 1.102653821288296e-09, 1.7190340394579253e-05,
          0.007696219036651147, 0.19550110947788524, 0.49963244748473046, 0.5,
          0.5003675525152695, 0.6742760175759245, 0.8044988905221148, 0.9711655571887814,
          0.9999828096596054, 0.9999999988973461, 1.0, 0.0],
    30.0: [1.0364534652562063e-279, 1.0360017415558664e-69, 6.863022597203209e-28,
           1.16483427335039e-05, 0.1626543077130151, 0.49960436788324253, 0.5,
           0.5003956321167575, 0.6896384975574363, 0.8373456922869849, 0.9973050179671741, 1.0,
           1.0, 1.0, 0.0],
}
T_LOGCDF = {
    0.7: [-17.28660799099096, -6.003941189579348, -3.7508243521878675, -2.301217680120196,
          -1.29028138738768, -0.6937366266006006, -0.6931471805599453, -0.6925580817612544,
          -0.4544466188455182, -0.32185033039384536, -0.15278489419614613, -0.02377885630569847,
          -0.002472055182506424, 0.0, -np.inf],
    3.0: [-68.97982935077677, -20.62554599789672, -10.971162936870327, -4.867026104920422,
          -1.632189224494123, -0.6938825559126722, -0.6931471805599453, -0.6924123455867702,
          -0.3941157302749241, -0.21753569164062553, -0.02925832348536299,
          -1.719048815017401e-05, -1.1026538218962187e-09, 0.0, -np.inf],
    30.0: [-642.3854361894913, -158.8430025917148, -62.54623464729917, -11.360346642706574,
           -1.8161281418575987, -0.6939387580082386, -0.6931471805599453, -0.6923562292109353,
           -0.3715877352665059, -0.17751828027420677, -0.0026986200346075908,
           -6.863022597203209e-28, -1.0360017415558664e-69, 0.0, -np.inf],
}


@pytest.mark.parametrize("df", sorted(T_CDF))
def test_t_cdf_logcdf_match_scipy(df):
    z = np.array(T_Z)
    np.testing.assert_allclose(stats.t.cdf(z, df), T_CDF[df], rtol=1e-11, atol=0)
    np.testing.assert_allclose(stats.t.logcdf(z, df), T_LOGCDF[df], rtol=1e-11, atol=0)
    # the survival function is the CDF at the mirror point
    np.testing.assert_allclose(stats.t.sf(-z, df), T_CDF[df], rtol=1e-11, atol=0)
    np.testing.assert_allclose(stats.t.logsf(-z, df), T_LOGCDF[df], rtol=1e-11, atol=0)
    np.testing.assert_allclose(zerax.jit(stats.t.logcdf)(z, df), T_LOGCDF[df], rtol=1e-11)


def test_t_cdf_location_scale_and_derivatives():
    np.testing.assert_allclose(float(stats.t.sf(2.0, 4.0, loc=0.5, scale=2.0)),
                               0.24747971666588256, rtol=1e-13)
    np.testing.assert_allclose(float(stats.t.logsf(100.0, 4.0)), -17.322734994206566,
                               rtol=1e-13)
    # d cdf / dx is the density, at 0 too (where the formulas' own derivatives are 0 * inf)
    for x in (-30.0, -2.0, -1e-6, 0.0, 0.3, 4.0):
        for df in (0.9, 3.0, 25.0):
            np.testing.assert_allclose(float(zerax.grad(stats.t.cdf)(x, df)),
                                       float(stats.t.pdf(x, df)), rtol=1e-10)
            np.testing.assert_allclose(float(zerax.grad(stats.t.logcdf)(x, df)),
                                       float(stats.t.pdf(x, df) / stats.t.cdf(x, df)),
                                       rtol=1e-9)
    check_grads(lambda x, s: stats.t.cdf(x, 3.0, 0.2, s), (0.7, 1.5), order=2,
                modes=("fwd", "rev"))
    check_grads(lambda x: stats.t.logcdf(x, 3.0), (0.0,), order=2, modes=("fwd", "rev"))
    got = zerax.vmap(zerax.grad(stats.t.cdf))(np.array([-1.0, 0.0, 2.0]), np.full(3, 5.0))
    np.testing.assert_allclose(got, stats.t.pdf(np.array([-1.0, 0.0, 2.0]), 5.0), rtol=1e-10)


def test_multivariate_normal_entropy():
    mvn = stats.multivariate_normal
    cov = np.array([[2.0, 0.5], [0.5, 1.0]])
    # SciPy's values (recorded)
    np.testing.assert_allclose(float(mvn.entropy(np.zeros(2), np.eye(2))), 2.8378770664093453,
                               rtol=1e-14)
    np.testing.assert_allclose(float(mvn.entropy(cov=2.0)), 1.7655121234846454, rtol=1e-14)
    np.testing.assert_allclose(float(mvn.entropy(np.zeros(3), 2.0)), 5.2965363704539365,
                               rtol=1e-14)
    np.testing.assert_allclose(float(mvn.entropy(np.zeros(2), [1.0, 2.0])), 3.184450656689318,
                               rtol=1e-14)
    np.testing.assert_allclose(float(mvn.entropy(None, cov)), 3.1176849603770567, rtol=1e-14)
    batch = np.stack([cov, 3 * np.eye(2)])
    np.testing.assert_allclose(mvn.entropy(None, batch),
                               [3.1176849603770567, 2.8378770664093453 + math.log(3)],
                               rtol=1e-14)
    # d entropy / d cov = inv(cov) / 2 (a symmetric matrix's derivative)
    np.testing.assert_allclose(zerax.grad(lambda c: mvn.entropy(None, c))(cov),
                               0.5 * np.linalg.inv(cov), rtol=1e-13)
    with pytest.raises(errors.ShapeError):
        mvn.entropy(None, np.ones((2, 3)))
