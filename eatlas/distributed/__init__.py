"""CEAT at corpus scale, locally or on Ray: contexts found in corpus shards with a mergeable sample
(``ceat_corpus``), encoded here or on a Ray Data actor pool and stored as parquet (``ceat_encode``);
joining a Ray cluster (``cluster``, which ``eatlas sweep --engine ray`` uses too). No database, no
command line.
"""
