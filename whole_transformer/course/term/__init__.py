"""The term: ``course.toml`` read as data (``settings``), and what it means for a hand-in (``late``)."""
