"""placeholder"""
def plan_program(*a, **k):
    raise NotImplementedError
