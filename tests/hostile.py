"""Return values a hostile submission might use to fool a test."""


class AlwaysEqual:
    """Says it equals anything: a test that asks its ``==`` is fooled."""

    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    def __hash__(self):
        return 0
