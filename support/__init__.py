"""Helpers shared by the tests and the benchmarks (bench/ imports nothing from tests/).

* :mod:`support.hbase_server`: a small server implementing HBase's Thrift (v1)
  interface, in memory (no HBase server exists on these machines).
* :mod:`support.stack`: a production-style dedupsite (dedicated MariaDB and Redis,
  gunicorn, RQ workers) for the drills and ``bench/load.py``.
* :mod:`support.corpus`: generated Chinese articles and near-duplicates for them.
* :mod:`support.drill_records`: the JSON records drills and load runs write.
* :mod:`support.table_records`: a labelled relational table with duplicate rows.
"""
