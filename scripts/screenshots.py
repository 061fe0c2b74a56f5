"""Take screenshots of the running product with Debian's chromium (Playwright).

    python scripts/screenshots.py --base http://127.0.0.1:8000 --user demo --password demo-password
"""

from __future__ import annotations

import argparse
from pathlib import Path

from playwright.sync_api import sync_playwright

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", default="http://127.0.0.1:8000")
    parser.add_argument("--user", default="demo")
    parser.add_argument("--password", default="demo-password")
    parser.add_argument("--out", type=Path, default=Path("docs/screenshots"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(f"{args.base}/accounts/login/")
        page.screenshot(path=str(args.out / "login-en.png"))
        page.fill("input[name=username]", args.user)
        page.fill("input[name=password]", args.password)
        page.click("button[type=submit]")
        page.wait_for_url("**/clusters/")
        page.screenshot(path=str(args.out / "clusters-en.png"), full_page=False)
        page.click("a.doc-id >> nth=0")
        page.wait_for_load_state()
        page.screenshot(path=str(args.out / "cluster-detail-en.png"), full_page=False)
        browser.close()
    print(f"screenshots written to {args.out}")


if __name__ == "__main__":
    main()
