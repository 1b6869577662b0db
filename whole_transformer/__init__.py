"""The whole Transformer: the package every notebook of the course uses.

Data flows one way: task → model / steps → decode / train → labs → notebooks.
Importing it trains nothing and loads no checkpoint.
"""

__version__ = "1.0.0"
