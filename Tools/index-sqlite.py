#!/usr/bin/env python3
"""The SQLite side of Tools/compare-index.

index-sqlite.py ITEMS.TSV QUERIES.JSON OUT.JSON

Loads the IndexCorpus items (written by index-compare) into an SQLite database the way one would
index them for these queries: a table with a B-tree index per queried column, the content type
tree and tags as (item, value) tables indexed by value, and the names in an FTS5 trigram table.
Then runs each query's SQL 5 times to warm up and 41 times timed (fetching every matching rowid,
as thumbcache returns every item number) and writes the p50s, counts, load time and size.
"""
import json, os, sqlite3, sys, tempfile, time
if sys.argv[1:2] in (["-h"], ["--help"]):
    print(__doc__)
    sys.exit(0)

tsv, queries_path, out_path = sys.argv[1:4]
queries = json.load(open(queries_path))
work = tempfile.mkdtemp(prefix="thumbcache-sqlite-")
db_path = os.path.join(work, "items.db")
db = sqlite3.connect(db_path)
db.executescript("""
PRAGMA journal_mode=WAL;
PRAGMA synchronous=NORMAL;
CREATE TABLE items(rowid INTEGER PRIMARY KEY, path TEXT, name TEXT, size INTEGER, type TEXT, modified INTEGER,
                   created INTEGER, width INTEGER, height INTEGER, make TEXT, model TEXT, iso INTEGER);
CREATE TABLE tree(item INTEGER, type TEXT);
CREATE TABLE tags(item INTEGER, tag TEXT);
CREATE VIRTUAL TABLE names USING fts5(name, tokenize='trigram');
""")

def rows():
    with open(tsv) as f:
        for line in f:
            p = line.rstrip("\n").split("\t")
            yield p

start = time.perf_counter()
batch_items, batch_tree, batch_tags, batch_names = [], [], [], []
def flush():
    db.executemany("INSERT INTO items VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", batch_items)
    db.executemany("INSERT INTO tree VALUES (?,?)", batch_tree)
    db.executemany("INSERT INTO tags VALUES (?,?)", batch_tags)
    db.executemany("INSERT INTO names(rowid, name) VALUES (?,?)", batch_names)
    batch_items.clear(); batch_tree.clear(); batch_tags.clear(); batch_names.clear()
for p in rows():
    rid = int(p[0])
    num = lambda s: int(s) if s else None
    batch_items.append((rid, p[1], p[2], int(p[3]), p[4], int(p[6]), int(p[7]), num(p[8]), num(p[9]), p[10] or None, p[11] or None, num(p[12])))
    for t in p[5].split(","):
        batch_tree.append((rid, t))
    for t in (p[13].split(",") if p[13] else []):
        batch_tags.append((rid, t))
    batch_names.append((rid, p[2]))
    if len(batch_items) >= 50000:
        flush()
flush()
db.executescript("""
CREATE INDEX items_size ON items(size);
CREATE INDEX items_modified ON items(modified);
CREATE INDEX items_width ON items(width);
CREATE INDEX items_model ON items(model);
CREATE INDEX items_type ON items(type);
CREATE INDEX tree_type ON tree(type, item);
CREATE INDEX tags_tag ON tags(tag, item);
ANALYZE;
""")
db.commit()
load = time.perf_counter() - start
db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
size = os.path.getsize(db_path)

results = []
for q in queries:
    times = []
    n = 0
    for run in range(46):
        t = time.perf_counter()
        n = len(db.execute(q["sql"]).fetchall())
        if run >= 5:
            times.append(time.perf_counter() - t)
    times.sort()
    results.append({"name": q["name"], "count": n, "p50_ms": times[len(times) // 2] * 1000})
json.dump({"load_s": load, "items_per_s": None, "file_bytes": size, "queries": results, "sqlite": sqlite3.sqlite_version},
          open(out_path, "w"), indent=2)
db.close()
for f in os.listdir(work):
    os.unlink(os.path.join(work, f))
os.rmdir(work)
