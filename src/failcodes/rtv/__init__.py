"""Reference retrieve-then-verify (RtV) evaluator (seed 000).

Source documents are split into overlapping character chunks (:mod:`.chunking`), indexed with
BM25 (:mod:`.retrieval`), queried with question + model response + explanation, and a verdict
judge (:mod:`.judge`) labels each item supported | contradicted | not found | out of scope with
a verbatim quote (checked against the retrieved text) and a one-sentence rationale.
:mod:`.evaluate` runs the pipeline and turns its results into failcodes traces;
:mod:`.metrics` computes the seed's evidence-support, hallucination, accuracy and agreement
figures; :mod:`.semantic` is the optional embedding diagnostic.
"""
