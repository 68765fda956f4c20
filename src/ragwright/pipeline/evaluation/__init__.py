"""Evaluation, one module per idea; `ragwright.pipeline.evaluate` is its public face.

config        EvalConfig, Chunking, Aggregate and index_key()
dataset       load_dataset(): a BEIR-layout folder and its judged queries
progress      EvalProgress reported to a ProgressCallback
index_cache   build_or_reuse_index(): indexes cached by corpus, chunking and embedder
scoring       run_queries(), aggregate_hits() and score_runs()
report        run_evaluation(): every configuration, sharing indexes
trec          TREC run files
"""
