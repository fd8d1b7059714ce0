def compile(fn=None, **kw):
    raise NotImplementedError
