"""The statistics: numpy/scipy in, numbers out; no files, no database, no command line, no console.

Rows scaled to unit length (``cosine``), WEAT/SEAT (``weat``), Holm-Bonferroni (``multitest``), the stimulus
bootstrap and leave-one-out (``robust``), the exact subset sampler of the permutation test
(``subsets``), BLAS thread control (``blas``), ML-EAT (``mleat``), CEAT's random-effects pooling
(``ceat``), IBD/EIBD (``ibd``), SC-EAT (``sceat``) and SAME (``same``). Nothing here imports the rest
of EATlas but :mod:`eatlas.errors`; import a module by its path (``from eatlas.stats.weat import
weat``), so that one statistic does not load the others.
"""
