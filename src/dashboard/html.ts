// HTML by a tagged template that escapes every value it is given, unless the value is itself
// HTML made here: no page can put a customer's text (an email) into markup unescaped.
import { ASSET_URLS } from './assets.ts';

export class Html {
  constructor(readonly text: string) {}
}

const ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const SPECIAL = /[&<>"']/g;

export function escapeHtml(value: string): string {
  return value.replace(SPECIAL, (c) => ESCAPES[c]!);
}

function piece(value: unknown): string {
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(piece).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += piece(values[i]) + strings[i + 1]!;
  return new Html(out);
}

export interface Layout {
  readonly title: string;
  /** The signed-in person's email and the CSRF token of the Log out form; null on the public pages. */
  readonly user: { readonly email: string; readonly csrf: string } | null;
  readonly body: Html;
}

/** The one page shell: landmarks, a heading per page, the stylesheet and the deferred script. */
export function page({ title, user, body }: Layout): string {
  return `<!doctype html>\n${html`<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · celebrity-api</title>
<link rel="stylesheet" href="${ASSET_URLS.style}">
<script src="${ASSET_URLS.script}" defer></script>
</head>
<body>
<header class="top">
<p class="brand"><a href="/dashboard">celebrity-api</a></p>
${user && html`<form method="post" action="/dashboard/logout" class="logout">
<input type="hidden" name="csrf" value="${user.csrf}">
<span class="who">${user.email}</span>
<button type="submit">Log out</button>
</form>`}
</header>
<main id="main">
<h1>${title}</h1>
${body}
</main>
</body>
</html>
`.text}`;
}

/** A message that screen readers announce: an error (alert) or a confirmation (status). */
export function notice(kind: 'error' | 'ok', text: string | null): Html | null {
  if (text === null) return null;
  return kind === 'error' ? html`<p class="notice error" role="alert">${text}</p>` : html`<p class="notice ok" role="status">${text}</p>`;
}
