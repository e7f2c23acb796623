/// The page's stylesheet and script, served from the binary: no build step, nothing from a CDN.
enum PageAssets {
    static let css = """
        :root { color-scheme: light dark; --bg: #f5f5f7; --fg: #1d1d1f; --muted: #6e6e73; --card: #fff; --accent: #0a64d8; --line: #d2d2d7; }
        @media (prefers-color-scheme: dark) { :root { --bg: #1c1c1e; --fg: #f5f5f7; --muted: #a1a1a6; --card: #2c2c2e; --accent: #4b9bff; --line: #3a3a3c; } }
        * { box-sizing: border-box; }
        body { margin: 0; font: 15px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; background: var(--bg); color: var(--fg); }
        header { display: flex; flex-wrap: wrap; gap: 12px; align-items: center; justify-content: space-between; padding: 10px 20px;
                 background: var(--card); border-bottom: 1px solid var(--line); position: sticky; top: 0; z-index: 1; }
        nav a { color: var(--fg); text-decoration: none; padding: 6px 12px; border-radius: 8px; }
        nav a[aria-current="page"] { background: var(--accent); color: #fff; }
        .search { display: flex; gap: 6px; flex: 1; max-width: 480px; }
        .search input { flex: 1; padding: 6px 10px; border: 1px solid var(--line); border-radius: 8px; background: var(--bg); color: var(--fg); font: inherit; }
        .snippet { display: block; font-size: 12px; line-height: 1.35; color: var(--muted, #666); margin-top: 4px; overflow-wrap: anywhere; }
        .snippet mark { background: color-mix(in srgb, var(--accent) 28%, transparent); color: inherit; border-radius: 2px; }
        button { font: inherit; padding: 5px 12px; border-radius: 8px; border: 1px solid var(--line); background: var(--card); color: var(--fg); cursor: pointer; }
        main { padding: 12px 20px 40px; }
        h1 { font-size: 22px; margin: 8px 0 14px; }
        h2 { font-size: 16px; margin: 18px 0 8px; }
        a:focus-visible, button:focus-visible, input:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
        .grid { list-style: none; margin: 0; padding: 0; display: grid; gap: 14px; grid-template-columns: repeat(auto-fill, minmax(150px, 1fr)); }
        .tile { display: flex; flex-direction: column; align-items: center; gap: 4px; padding: 10px 6px; border-radius: 12px;
                color: var(--fg); text-decoration: none; }
        .tile:hover, .tile:focus-visible { background: var(--card); }
        .tile img, .folder { width: 128px; height: 128px; object-fit: contain; }
        .folder { display: block; background: no-repeat center/96px url("data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 64 52'%3E%3Cpath d='M2 8a4 4 0 0 1 4-4h18l6 6h28a4 4 0 0 1 4 4v32a4 4 0 0 1-4 4H6a4 4 0 0 1-4-4z' fill='%235aa9f5'/%3E%3Cpath d='M2 16h60v30a4 4 0 0 1-4 4H6a4 4 0 0 1-4-4z' fill='%237dbdfa'/%3E%3C/svg%3E"); }
        .name { max-width: 100%; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; font-size: 13px; }
        .meta, .count, .crumbs, .empty, .more { color: var(--muted); font-size: 12px; }
        .crumbs { margin-bottom: 12px; font-size: 14px; } .crumbs a { color: var(--accent); }
        .item { display: flex; flex-wrap: wrap; gap: 24px; align-items: flex-start; }
        .item figure { margin: 0; background: var(--card); border-radius: 12px; padding: 12px; max-width: 100%; }
        .item img { width: 256px; height: 256px; object-fit: contain; }
        .item .viewer { display: block; width: auto; height: auto; max-width: min(100%, 1024px); max-height: 75vh; }
        .item video.motion { margin-top: 8px; }
        .pager { display: flex; gap: 16px; align-items: center; justify-content: center; margin-top: 8px; font-size: 14px; }
        .pager a { color: var(--accent); } .pager [aria-disabled] { color: var(--muted); }
        .tags, .taglist { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: 8px; }
        .tag { background: var(--card); border: 1px solid var(--line); border-radius: 999px; padding: 2px 10px; }
        .taglist a { color: var(--fg); text-decoration: none; }
        .tag-edit { display: inline; }
        .tags button { padding: 0 6px; border: none; background: none; }
        .attributes { border-collapse: collapse; font-size: 13px; }
        .attributes th { text-align: left; font-weight: 500; color: var(--muted); padding: 3px 16px 3px 0; vertical-align: top; }
        .attributes td { word-break: break-all; }
        .error { color: #d70015; }
        """

    static let js = """
        "use strict";
        // "/" focuses the search box; arrow keys move between the grid's tiles.
        document.addEventListener("keydown", (e) => {
          const typing = e.target instanceof HTMLInputElement || e.target instanceof HTMLTextAreaElement;
          if (e.key === "/" && !typing) { e.preventDefault(); document.querySelector(".search input")?.focus(); return; }
          if (typing || !["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown"].includes(e.key)) return;
          const tiles = [...document.querySelectorAll(".grid .tile")];
          const i = tiles.indexOf(document.activeElement);
          if (i < 0) return;
          const columns = Math.max(1, Math.round(tiles[0].parentElement.parentElement.clientWidth / tiles[0].parentElement.offsetWidth));
          const step = { ArrowLeft: -1, ArrowRight: 1, ArrowUp: -columns, ArrowDown: columns }[e.key];
          const next = tiles[i + step];
          if (next) { e.preventDefault(); next.focus(); }
        });
        // On an item's pages, the left and right arrows turn the page in place: the preview, the
        // links and the address follow (the links alone do it without JavaScript).
        document.addEventListener("keydown", (e) => {
          const pager = document.querySelector(".pager");
          const typing = e.target instanceof HTMLInputElement || e.target instanceof HTMLTextAreaElement;
          if (!pager || typing || !["ArrowLeft", "ArrowRight"].includes(e.key)) return;
          const link = pager.querySelector(e.key === "ArrowLeft" ? "a[rel=prev]" : "a[rel=next]");
          if (!link) return;
          e.preventDefault();
          turnTo(Number(link.dataset.page), pager, link);
        });
        // A pager without data-pages (an office file's or e-book's words) goes on until a page's
        // preview is not found.
        function turnTo(page, pager, link) {
          const pages = pager.dataset.pages ? Number(pager.dataset.pages) : Infinity;
          const preview = document.getElementById("preview");
          preview.src = link.dataset.preview;
          preview.alt = preview.alt.replace(/page \\d+$/, "page " + page);
          history.replaceState(null, "", link.href);
          pager.querySelector(".page-number").textContent = "Page " + page + (pages === Infinity ? "" : " of " + pages);
          const template = link.dataset.preview.replace(/page=\\d+/, "page=");
          const item = link.href.replace(/page=\\d+$/, "page=");
          for (const [rel, to, label] of [["prev", page - 1, "‹ Previous"], ["next", page + 1, "Next ›"]]) {
            const old = pager.querySelector("[rel=" + rel + "], .page-link:" + (rel === "prev" ? "first-child" : "last-child"));
            let next;
            if (to >= 1 && to <= pages) {
              next = document.createElement("a");
              next.rel = rel; next.href = item + to; next.dataset.preview = template + to; next.dataset.page = to;
            } else {
              next = document.createElement("span");
              next.setAttribute("aria-disabled", "true");
            }
            next.className = "page-link"; next.textContent = label;
            old.replaceWith(next);
          }
        }
        // Past the last page of such a document: back to the last one, now counted.
        let shown = null;
        const preview = document.getElementById("preview");
        preview?.addEventListener("load", () => {
          if (/[?&]page=\\d+$/.test(location.href)) shown = { page: Number(new URLSearchParams(location.search).get("page")), src: preview.src, href: location.href };
        });
        preview?.addEventListener("error", () => {
          const pager = document.querySelector(".pager");
          if (!pager || pager.dataset.pages) return;
          if (!shown) { pager.querySelector(".page-number").textContent = "No such page"; return; }
          pager.dataset.pages = shown.page;
          turnTo(shown.page, pager, { dataset: { preview: shown.src }, href: shown.href });
        });
        // Tags change in place through PUT and DELETE /tags; without JavaScript the forms post.
        document.addEventListener("submit", async (e) => {
          const form = e.target;
          if (!form.classList.contains("tag-edit")) return;
          e.preventDefault();
          const data = new FormData(form);
          const query = new URLSearchParams({ path: data.get("path"), tag: data.get("tag") });
          const error = document.querySelector(".error");
          const reply = await fetch("/tags?" + query, { method: data.get("action") === "add" ? "PUT" : "DELETE", credentials: "same-origin" });
          const body = await reply.json();
          if (!reply.ok) { error.textContent = body.error; error.hidden = false; return; }
          error.hidden = true;
          const list = document.getElementById("tags");
          list.replaceChildren(...body.tags.map((tag) => {
            const li = document.createElement("li");
            const f = document.createElement("form");
            f.className = "tag-edit"; f.method = "post"; f.action = "/item/tags";
            for (const [name, value] of [["path", data.get("path")], ["tag", tag], ["action", "remove"]]) {
              const input = document.createElement("input"); input.type = "hidden"; input.name = name; input.value = value; f.append(input);
            }
            const label = document.createElement("span"); label.className = "tag"; label.textContent = tag;
            const button = document.createElement("button"); button.type = "submit"; button.textContent = "×";
            button.setAttribute("aria-label", "Remove tag " + tag);
            f.append(label, " ", button); li.append(f); return li;
          }));
          if (data.get("action") === "add") { form.reset(); document.getElementById("new-tag").focus(); }
        });
        """
}
