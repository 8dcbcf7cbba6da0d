// The dashboard's one stylesheet and one script, served by the server itself under a content hash,
// so they can be cached for a year and a new version is a new URL. Everything works without them.
import { createHash } from 'node:crypto';

const STYLE = `:root{color-scheme:light;--ink:#1a1a1a;--muted:#4a4a4a;--line:#767676;--link:#0b4fb3;--accent:#1f4f8a;--danger:#a4231c;--ok:#1e6b34;--bar-ok:#1f5f99;--bar-rej:#b3261e}
*{box-sizing:border-box}
[hidden]{display:none!important}
html{-webkit-text-size-adjust:100%}
body{margin:0 auto;max-width:46rem;padding:0 .75rem 2rem;font:1rem/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);background:#fff}
a{color:var(--link)}
:focus-visible{outline:3px solid var(--link);outline-offset:2px}
h1{font-size:1.6rem;margin:1rem 0 .5rem}
h2{font-size:1.25rem;margin:1.75rem 0 .5rem;border-top:1px solid #d0d0d0;padding-top:1rem}
h3{font-size:1.05rem;margin:1rem 0 .25rem}
.top{display:flex;flex-wrap:wrap;align-items:center;justify-content:space-between;gap:.5rem;padding:.5rem 0;border-bottom:1px solid #d0d0d0}
.brand{margin:0;font-weight:700}
.brand a{color:var(--ink);text-decoration:none;display:inline-block;padding:.25rem 0}
.logout{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem;margin:0}
.who{color:var(--muted);overflow-wrap:anywhere}
form{margin:.75rem 0}
label{display:block;font-weight:600;margin:.75rem 0 .25rem}
input[type=email],input[type=password],input[type=text],select{display:block;width:100%;max-width:24rem;font:inherit;padding:.5rem;border:1px solid var(--line);border-radius:4px;background:#fff;color:var(--ink)}
input[aria-invalid=true]{border-color:var(--danger);border-width:2px}
.hint{margin:.25rem 0 0;color:var(--muted);font-size:.9rem}
.actions{display:flex;flex-wrap:wrap;gap:.5rem;margin-top:.75rem}
button{font:inherit;font-weight:600;min-height:2.75rem;padding:.5rem 1rem;border:2px solid var(--accent);border-radius:4px;background:var(--accent);color:#fff;cursor:pointer}
button.secondary{background:#fff;color:var(--accent)}
button.danger{background:var(--danger);border-color:var(--danger)}
.logout button{min-height:2.25rem;padding:.25rem .75rem;background:#fff;color:var(--accent)}
.notice{padding:.75rem 1rem;border-left:4px solid;margin:1rem 0}
.notice.error{background:#fdecea;border-color:var(--danger)}
.notice.ok{background:#e8f3ea;border-color:var(--ok)}
.secret{border:2px solid var(--ok);border-radius:6px;padding:.75rem 1rem;margin:1rem 0;background:#f4faf5}
.secret h3{margin-top:0}
.key{display:block;font:1rem/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;overflow-wrap:anywhere;word-break:break-all;background:#fff;border:1px solid var(--line);padding:.5rem;margin:.5rem 0;user-select:all}
code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;overflow-wrap:anywhere}
dl.figures{display:grid;grid-template-columns:minmax(0,max-content) minmax(0,1fr);gap:.25rem 1rem;margin:.5rem 0}
dl.figures dt{font-weight:600}
dl.figures dd{margin:0;overflow-wrap:anywhere}
figure{margin:1rem 0}
figcaption{font-weight:600;margin-bottom:.25rem}
svg.chart{display:block;width:100%;height:auto;max-height:14rem}
.chart .bar-ok,.swatch.ok{fill:var(--bar-ok);background:var(--bar-ok)}
.chart .bar-rej,.swatch.rej{fill:var(--bar-rej);background:var(--bar-rej)}
.chart .axis{stroke:var(--line)}
.chart text{fill:var(--muted);font-size:15px;font-family:system-ui,sans-serif}
.legend{list-style:none;display:flex;flex-wrap:wrap;gap:1rem;padding:0;margin:.25rem 0}
.swatch{display:inline-block;width:.9rem;height:.9rem;margin-right:.35rem;vertical-align:-.1rem;border-radius:2px}
table{border-collapse:collapse;width:100%;margin:.5rem 0;font-variant-numeric:tabular-nums}
caption{text-align:left;font-weight:600;padding:.25rem 0}
th,td{padding:.3rem .4rem;border-bottom:1px solid #d0d0d0;text-align:right}
th:first-child,td:first-child{text-align:left}
thead th{border-bottom:2px solid var(--line);font-size:.9rem}
@media (max-width:24rem){body{padding:0 .5rem 2rem}h1{font-size:1.4rem}th,td{padding:.25rem .2rem;font-size:.9rem}}
`;

const SCRIPT = `'use strict';
// The dashboard's one script: copy buttons, and a shown key that never outlives its page.
document.addEventListener('DOMContentLoaded', function () {
  document.querySelectorAll('button[data-copy]').forEach(function (button) {
    var source = document.getElementById(button.getAttribute('data-copy'));
    var status = document.getElementById(button.getAttribute('data-status'));
    if (!source || !status || !navigator.clipboard) return;
    button.hidden = false;
    button.addEventListener('click', function () {
      navigator.clipboard.writeText(source.textContent.trim()).then(
        function () { status.textContent = 'Copied to the clipboard.'; },
        function () { status.textContent = 'Copying failed: select the key and copy it yourself.'; }
      );
    });
  });
  var secret = document.querySelector('[data-secret]');
  if (secret) {
    // The key came in the answer to a POST: a reload now asks for /dashboard afresh, never re-sends the form.
    history.replaceState(null, '', '/dashboard');
    // Leaving the page takes the key with it, so the back button cannot bring it back from a cache.
    window.addEventListener('pagehide', function () { secret.remove(); });
  }
});
window.addEventListener('pageshow', function (event) { if (event.persisted) location.reload(); });
`;

export interface Asset {
  readonly body: Buffer;
  readonly type: string;
}

function hashed(name: string, ext: string, text: string, type: string): [string, Asset] {
  const hash = createHash('sha256').update(text).digest('hex').slice(0, 12);
  return [`/dashboard/assets/${name}.${hash}.${ext}`, { body: Buffer.from(text), type }];
}

const style = hashed('dashboard', 'css', STYLE, 'text/css; charset=utf-8');
const script = hashed('dashboard', 'js', SCRIPT, 'text/javascript; charset=utf-8');

export const ASSET_URLS = { style: style[0], script: script[0] } as const;
export const ASSETS: ReadonlyMap<string, Asset> = new Map([style, script]);
