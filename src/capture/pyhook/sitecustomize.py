# gpuscope's startup hook. `gpuscope capture` puts this folder first on the
# captured program's PYTHONPATH (for that program and its children only), so
# Python runs this file at startup. It starts the host half of the capture
# (framework ops, modules, Python stacks, host samples; docs/capture.md) and
# then runs the sitecustomize it shadows, if there is one, as Python would have.
import os as _os
import sys as _sys


def _start():
    try:
        import gpuscope_hook

        gpuscope_hook.install()
    except Exception as e:  # never harm the program
        _sys.stderr.write("gpuscope: framework view unavailable: the startup hook failed: %r\n" % (e,))


def _chain():
    # The sitecustomize this one hides (Debian's, a virtualenv's), found on the
    # rest of sys.path, runs under the same name.
    here = _os.path.dirname(_os.path.abspath(__file__))
    rest = [p for p in _sys.path if _os.path.abspath(p or ".") != here]
    _sys.path[:] = rest  # the program sees the path it would have had
    try:
        import importlib.machinery
        import importlib.util

        spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
        if spec is None or spec.loader is None:
            return
        module = importlib.util.module_from_spec(spec)
        _sys.modules["sitecustomize"] = module
        spec.loader.exec_module(module)
    except Exception as e:
        _sys.stderr.write("gpuscope: note: the program's own sitecustomize failed: %r\n" % (e,))


_start()
_chain()
