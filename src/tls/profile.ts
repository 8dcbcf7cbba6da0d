// How the server asks to be reached over TLS: Mozilla's "intermediate" profile on the listener, the
// same for the self-signed certificate and an operator's own, and HSTS on every answer sent over
// HTTPS, for the API's pipeline (src/http/) and the dashboard's pages (src/dashboard/) alike.
import { constants } from 'node:crypto';

/**
 * TLS 1.3 (its three suites, all AEAD), and TLS 1.2 with ECDHE key exchange and AEAD suites only:
 * AES-GCM and ChaCha20-Poly1305 (https://ssl-config.mozilla.org, "intermediate", without its DHE
 * suites). No CBC suite (LUCKY13), no CCM8, no ARIA. The client's order wins, as the profile says:
 * every suite offered is strong, and a phone without AES hardware prefers ChaCha20.
 * Renegotiation is refused outright (a client-initiated one costs the server a handshake each, a
 * denial-of-service lever; TLS 1.3 has none); Node alone would allow three in ten minutes.
 */
export const TLS_PROFILE = Object.freeze({
  minVersion: 'TLSv1.2',
  ciphers: [
    'TLS_AES_128_GCM_SHA256',
    'TLS_AES_256_GCM_SHA384',
    'TLS_CHACHA20_POLY1305_SHA256',
    'ECDHE-ECDSA-AES128-GCM-SHA256',
    'ECDHE-RSA-AES128-GCM-SHA256',
    'ECDHE-ECDSA-AES256-GCM-SHA384',
    'ECDHE-RSA-AES256-GCM-SHA384',
    'ECDHE-ECDSA-CHACHA20-POLY1305',
    'ECDHE-RSA-CHACHA20-POLY1305',
  ].join(':'),
  honorCipherOrder: false,
  secureOptions: constants.SSL_OP_NO_RENEGOTIATION,
} as const);

/** HSTS for responses sent over HTTPS (RFC 6797): one year, subdomains included. */
export const HSTS: readonly string[] = ['Strict-Transport-Security', 'max-age=31536000; includeSubDomains'];
