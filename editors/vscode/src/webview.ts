// The report page in a webview: it is inline CSS and SVG with no script; the policy added here
// forbids anything else (scripts, fetches, remote images).

const CSP = `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:;">`;

export function webviewHtml(page: string): string {
  return /<head[^>]*>/i.test(page) ? page.replace(/<head[^>]*>/i, (h) => `${h}${CSP}`) : `${CSP}${page}`;
}
