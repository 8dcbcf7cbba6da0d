// A certificate and key about to serve, checked first: a renewed pair read on SIGHUP replaces the
// live one only when it would work, so a half-copied file or a key of another certificate keeps the
// old pair serving instead of failing every handshake.
import { createPrivateKey, X509Certificate } from 'node:crypto';

export interface CertificateInfo {
  /** SHA-256 of the leaf certificate, as X509Certificate#fingerprint256. */
  readonly fingerprint: string;
  /** The leaf's notAfter, as X509Certificate#validTo. */
  readonly validTo: string;
}

/** Throws an Error saying what is wrong with the pair (PEM; the first certificate is the leaf). */
export function checkCertificatePair(cert: string | Buffer, key: string | Buffer, now: number): CertificateInfo {
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(cert);
  } catch (err) {
    throw new Error(`the certificate is not a PEM certificate (${(err as Error).message})`);
  }
  let privateKey;
  try {
    privateKey = createPrivateKey(key);
  } catch (err) {
    throw new Error(`the key is not a PEM private key (${(err as Error).message})`);
  }
  if (!leaf.checkPrivateKey(privateKey)) throw new Error('the key does not belong to the certificate');
  if (Date.parse(leaf.validTo) <= now) throw new Error(`the certificate expired on ${leaf.validTo}`);
  if (Date.parse(leaf.validFrom) > now) throw new Error(`the certificate is not valid before ${leaf.validFrom}`);
  return { fingerprint: leaf.fingerprint256, validTo: leaf.validTo };
}
