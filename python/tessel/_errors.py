"""tessel.Error: every error of the engine (bad data, bad parameters, files) as one Python exception."""


class Error(ValueError):
    """An error reported by tessel: the message names the file, the line or the argument, and the fix.

    A subclass of ValueError, since nearly every error is about the input (data, parameters, files), and
    scikit-learn's conventions expect ValueError for bad input.
    """
