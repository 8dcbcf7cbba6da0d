// How the server asks to be reached over TLS: HSTS on every answer sent over HTTPS, for the API's
// pipeline (src/http/) and the dashboard's pages (src/dashboard/) alike.

/** HSTS for responses sent over HTTPS (RFC 6797): one year, subdomains included. */
export const HSTS: readonly string[] = ['Strict-Transport-Security', 'max-age=31536000; includeSubDomains'];
