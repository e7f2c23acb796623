#!/usr/bin/env python3
"""Tools/fulltext-peers.py DIR: the peers of Tools/compare-fulltext on the same texts and queries.

Part 1, `queries`: draws the queries from DIR/texts (a fixed seed): 50 one-word, 50 two-word
AND, 50 phrase (two or three adjacent words) and 50 prefix queries, into DIR/queries.json.
Part 2, `run`: indexes DIR/texts with SQLite FTS5 (unicode61, diacritics removed; bm25; content
stored, as thumbcache stores it for snippets; 'optimize' afterwards) and Xapian (the engine Recoll
uses: positions, no stemming; BM25; compacted afterwards), times each query for the ten best
documents like fulltext-compare (5 warm-up runs, the median of 21), and writes DIR/fts5.json and
DIR/xapian.json."""
import json, os, random, re, shutil, sqlite3, statistics, sys, time
if sys.argv[1:2] in (["-h"], ["--help"]):
    print(__doc__)
    sys.exit(0)

WORD = re.compile(r"[a-z]{3,}")


def texts(d):
    names = sorted((n for n in os.listdir(d + "/texts") if n.endswith(".txt")), key=lambda n: int(n[:-4]))
    for n in names:
        with open(d + "/texts/" + n, encoding="utf-8", errors="replace") as f:
            yield int(n[:-4]), f.read()


def draw_queries(d):
    rng = random.Random(38)
    docs = [(n, WORD.findall(t.lower())) for n, t in texts(d)]
    docs = [(n, w) for n, w in docs if len(w) >= 20]
    df = {}
    for _, words in docs:
        for w in set(words):
            df[w] = df.get(w, 0) + 1
    n = len(docs)
    # Words a person might look for: in at least 3 documents, in at most a quarter of them.
    vocabulary = sorted(w for w, c in df.items() if 3 <= c <= n // 4)
    one = rng.sample(vocabulary, 50)
    two = []
    while len(two) < 50:
        _, words = rng.choice(docs)
        pair = [w for w in set(words) if w in df and 3 <= df[w] <= n // 4]
        if len(pair) >= 2:
            a, b = rng.sample(sorted(pair), 2)
            two.append(f"{a} {b}")
    phrases = []
    while len(phrases) < 50:
        _, words = rng.choice(docs)
        k = rng.choice([2, 3])
        i = rng.randrange(0, len(words) - k)
        phrase = words[i:i + k]
        if all(3 <= df.get(w, 0) for w in phrase):
            phrases.append('"' + " ".join(phrase) + '"')
    prefixes = [w[:rng.choice([4, 5])] + "*" for w in rng.sample([w for w in vocabulary if len(w) >= 7], 50)]
    json.dump({"one-word": one, "two-word": two, "phrase": phrases, "prefix": prefixes}, open(d + "/queries.json", "w"), indent=1)


def timed(run):
    for _ in range(5):
        top = run()
    times = []
    for _ in range(21):
        t = time.perf_counter()
        top = run()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times), top


def fts5(d, queries):
    path = d + "/fts5.db"
    for suffix in ("", "-wal", "-journal"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=OFF")
    db.execute("PRAGMA synchronous=OFF")
    db.execute("CREATE VIRTUAL TABLE docs USING fts5(body, tokenize='unicode61 remove_diacritics 2')")
    corpus = list(texts(d))
    t = time.perf_counter()
    with db:
        db.executemany("INSERT INTO docs(rowid, body) VALUES (?, ?)", corpus)
        db.execute("INSERT INTO docs(docs) VALUES ('optimize')")
    seconds = time.perf_counter() - t
    db.execute("VACUUM")
    size = os.path.getsize(path)
    out = {}
    for name, list_ in queries.items():
        rows = []
        for q in list_:
            expression = q if q.startswith('"') else " AND ".join(q.split())
            run = lambda: [r[0] for r in db.execute("SELECT rowid FROM docs WHERE docs MATCH ? ORDER BY rank LIMIT 10", (expression,))]
            ms, top = timed(run)
            count = db.execute("SELECT count(*) FROM docs WHERE docs MATCH ?", (expression,)).fetchone()[0]
            rows.append({"query": q, "ms": ms, "count": count, "top": top})
        out[name] = rows
    return {"index_s": seconds, "index_bytes": size, "queries": out}


def xapian_run(d, queries):
    import xapian
    path, compact = d + "/xapian", d + "/xapian-compact"
    for p in (path, compact):
        shutil.rmtree(p, ignore_errors=True)
    corpus = list(texts(d))
    t = time.perf_counter()
    db = xapian.WritableDatabase(path, xapian.DB_CREATE_OR_OVERWRITE)
    generator = xapian.TermGenerator()
    generator.set_stemmer(xapian.Stem("none"))
    for n, text in corpus:
        doc = xapian.Document()
        generator.set_document(doc)
        generator.index_text(text)
        db.replace_document(n + 1, doc)  # Xapian's document ids start at 1
    db.commit()
    db.close()
    seconds = time.perf_counter() - t
    xapian.Database(path).compact(compact)
    size = sum(os.path.getsize(os.path.join(compact, f)) for f in os.listdir(compact))
    db = xapian.Database(compact)
    enquire = xapian.Enquire(db)
    enquire.set_weighting_scheme(xapian.BM25Weight())
    parser = xapian.QueryParser()
    parser.set_database(db)
    parser.set_default_op(xapian.Query.OP_AND)
    flags = xapian.QueryParser.FLAG_PHRASE | xapian.QueryParser.FLAG_WILDCARD | xapian.QueryParser.FLAG_BOOLEAN
    out = {}
    for name, list_ in queries.items():
        rows = []
        for q in list_:
            def run():
                enquire.set_query(parser.parse_query(q, flags))
                return [m.docid - 1 for m in enquire.get_mset(0, 10)]
            ms, top = timed(run)
            enquire.set_query(parser.parse_query(q, flags))
            rows.append({"query": q, "ms": ms, "count": enquire.get_mset(0, db.get_doccount()).size(), "top": top})
        out[name] = rows
    return {"index_s": seconds, "index_bytes": size, "queries": out}


if __name__ == "__main__":
    step, d = sys.argv[1], sys.argv[2]
    if step == "queries":
        draw_queries(d)
    else:
        queries = json.load(open(d + "/queries.json"))
        json.dump(fts5(d, queries), open(d + "/fts5.json", "w"))
        json.dump(xapian_run(d, queries), open(d + "/xapian.json", "w"))
