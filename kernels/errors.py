"""The one exception type for mistakes a user can make (bad deal, bad deck, bad range...).

The CLI turns it into one sentence and exit code 2; library callers can catch it as ValueError.
"""


class BmnError(ValueError):
    """An input the engine cannot accept; the message is one sentence meant for the user."""
