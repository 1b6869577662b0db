"""The benchmarks of the course: how fast it is for the people who use it (``make bench``, that is
``benchmarks/bench.py``, the entry point; README.md in this folder says what each group times and against
what target).

One module per group, or per close family of groups:

    train_step.py    train-step   one training step, ours vs the same model in x-transformers
    train_60.py      train-60     the full 60-epoch training run
    read_1000.py     read-1000    reading all 1,000 numbers: batched vs one at a time; with and without the KV cache
    labs.py          labs         one change of each lab from Python; the training lab's Train button
    notebooks.py     notebooks    each source notebook in a fresh kernel, and under autograding
                     startup      a fresh kernel to notebook 01's first lab on screen
    autograde.py     autograde    one submission three ways; a class with JOBS=2 and on 2 Dask workers
    scale.py         scale        merging one student (SQLite, PostgreSQL), Dask's per-task overhead
    scale_study.py                the scale study under results.md's table, from the figures measured
    service.py       service      grading on submission: idle latency, CPU per submission, a burst
    service_rig.py                the service group's course, exchange, service process and CPU meter

and the parts they share:

    rows.py          a row of results.md, the run that collects them (Bench), a group (Group)
    figures.py       medians, p90, "× faster", ms and kB
    machine.py       the machine described (CPU, versions, commit) and how busy it is
    checkout.py      the checkout's folders and notebooks, the simulated class (tests/simclass/), the course command
    results_md.py    results.md written, and read back (--keep, the README's table)
    readme.py        README.md's "How fast" table from results.md
    cli.py           the groups in their order, the command line, a run
"""
