#!/usr/bin/python3
"""thumbnail.py: the Python module in one script. Warms a folder into a cache, writes one file's
thumbnail as PNG, and searches.

    python3 thumbnail.py ~/.cache/thumbcache ~/Pictures ~/Pictures/cat.jpg cat.png 'kind:image'
"""
import sys

import thumbcache

if len(sys.argv) != 6:
    sys.exit("usage: thumbnail.py CACHE FOLDER FILE OUT.png QUERY")
cache_dir, folder, file, out, query = sys.argv[1:]
try:
    with thumbcache.Cache(cache_dir) as cache:
        warmed = cache.warm(folder)
        print("warmed %d files: %d made, %d cached, %d failed" % (warmed.seen, warmed.generated, warmed.already_cached, warmed.failed))
        thumb = cache.get(file, size=256, kind="thumbnail")
        with open(out, "wb") as f:
            f.write(thumb.png)
        print("thumbnail %dx%d%s" % (thumb.width, thumb.height, " from the cache" if thumb.from_cache else ""))
        results = cache.search(query, limit=10, snippets=True)
        print("%d found" % len(results))
        for result in results:
            print(result.path or "(an app's item)")
except thumbcache.ThumbcacheError as error:
    sys.exit("thumbnail.py: %s: %s" % (error.status, error))
