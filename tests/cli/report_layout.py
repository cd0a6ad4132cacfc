"""Lays an HTML report out in headless Chromium at a given window width and checks that every
headline table (report.py's `_headline_tables`) is shown whole: its right edge inside the window
and no column hidden in its sideways-scrolling box. Prints one line per table; exit 0 when all
fit, 1 when one does not, 2 when Chromium gives no layout.

Usage: report_layout.py PAGE CHROMIUM WIDTH WORK_DIR

A small script appended to a copy of the page measures the laid-out tables
(getBoundingClientRect, scrollWidth against clientWidth) and writes them into the DOM, which
`chromium --dump-dom` prints."""

import json
import pathlib
import re
import subprocess
import sys

MEASURE = """<script>
(() => {
  const tables = [];
  for (const t of document.querySelectorAll('.headline table')) {
    const box = t.closest('.scroll');
    const r = t.getBoundingClientRect();
    tables.push({caption: t.caption ? t.caption.textContent : '', left: r.left, right: r.right,
                 scroll: box ? box.scrollWidth : 0, client: box ? box.clientWidth : 0});
  }
  const out = {viewport: window.innerWidth, page: document.documentElement.scrollWidth, tables};
  const pre = document.createElement('pre');
  pre.id = 'calbench-layout';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>"""


def main() -> int:
    page, chromium, width, work = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    text = pathlib.Path(page).read_text(encoding="utf-8")
    if "</body>" not in text:
        print(f"{page}: no </body>")
        return 2
    probe = pathlib.Path(page).with_name(f"layout_{width}.html")
    probe.write_text(text.replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    run = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         f"--user-data-dir={work}/profile-{width}", f"--window-size={width},900", "--dump-dom",
         probe.as_uri()],
        capture_output=True, text=True, timeout=120)
    found = re.search(r'<pre id="calbench-layout">(.*?)</pre>', run.stdout, re.S)
    if run.returncode != 0 or not found:
        print(f"chromium gave no layout (exit {run.returncode}): {run.stderr[-500:]}")
        return 2
    layout = json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    if not layout["tables"]:
        print("no headline table on the page")
        return 1
    ok = layout["viewport"] == width
    print(f"window {layout['viewport']} px (asked {width}), page {layout['page']} px wide")
    for t in layout["tables"]:
        whole = t["right"] <= layout["viewport"] and t["scroll"] <= t["client"]
        ok = ok and whole
        print(f"{'fits' if whole else 'DOES NOT FIT'}: {t['caption']}: right edge "
              f"{t['right']:.0f} px, {t['scroll']} px of columns in a {t['client']} px box")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
