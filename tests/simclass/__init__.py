"""The simulated class: a small course made from source/, students who write what real students write, and
the grades each must get (``roster``); a throwaway PostgreSQL server (``pgcluster``)."""
