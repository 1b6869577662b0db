"""The simulated class: a small course made from source/, students who write what real students write, and
the grades each must get (``students``: the class as a table; ``hand_ins`` and ``edits``: its builders;
``expected``: what the grades must say); a throwaway PostgreSQL server (``pgcluster``)."""
