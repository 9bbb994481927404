"""Layer 2, core: ``Primitive`` and ``bind``, traces and tracers, abstract values,
``Array`` (a buffer on a device), pytrees, the AD vocabulary (``Zero``,
``UndefinedPrimal``, ``add_any``) and ``flatten_fun``.  Imports only base."""
