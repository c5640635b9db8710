"""The optional semantic leg: embedding models (``embedders``), SimHash signatures
(``simhash``), the sqlite-vec index (``index``), the per-file state (``semantic``) and its
upkeep (``maintenance``). Nothing here is imported until a file has semantic search on or a
command asks for it; numpy, onnxruntime and llm load lazily."""
