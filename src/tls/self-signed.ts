// A self-signed localhost certificate built with node:crypto alone, and its reuse in the state dir.
import { createHash, createPrivateKey, generateKeyPairSync, randomBytes, sign, X509Certificate } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { chmod, mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { isIPv4, isIPv6 } from 'node:net';
import { join } from 'node:path';
import {
  bitString,
  boolean,
  explicit,
  ia5String,
  implicit,
  integer,
  octetString,
  oid,
  sequence,
  set,
  time,
  utf8String,
} from './der.ts';

export interface SelfSignedCertificate {
  cert: string; // PEM 'CERTIFICATE'
  key: string; // PEM PKCS#8 'PRIVATE KEY'
  fingerprint: string; // SHA-256 of the DER, 'AB:CD:...', as X509Certificate#fingerprint256
}

export interface SelfSignedOptions {
  hosts?: string[]; // DNS names and IP literals for subjectAltName
  days?: number; // validity after `now`
  now?: Date;
}

export const DEFAULT_HOSTS: readonly string[] = ['localhost', '127.0.0.1', '::1'];
// 825 days is the longest lifetime Apple platforms accept for a TLS server certificate.
export const DEFAULT_DAYS = 825;
// ensureCertificate replaces a certificate that would expire within this window.
const RENEW_BEFORE_MS = 7 * 24 * 3600 * 1000;

const OID = {
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  commonName: '2.5.4.3',
  organization: '2.5.4.10',
  subjectKeyIdentifier: '2.5.29.14',
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
  basicConstraints: '2.5.29.19',
  extKeyUsage: '2.5.29.37',
  serverAuth: '1.3.6.1.5.5.7.3.1',
} as const;

// ecdsa-with-SHA256 carries no parameters at all, not even NULL (RFC 5758 3.2).
const SIGNATURE_ALGORITHM = sequence(oid(OID.ecdsaWithSha256));

// Most significant RDN first; UTF8String as RFC 5280 4.1.2.4 asks of new certificates.
const NAME = sequence(
  set(sequence(oid(OID.organization), utf8String('celebrity-api self-signed'))),
  set(sequence(oid(OID.commonName), utf8String('localhost'))),
);

export function createSelfSignedCertificate(options: SelfSignedOptions = {}): SelfSignedCertificate {
  const hosts = options.hosts ?? DEFAULT_HOSTS;
  const days = options.days ?? DEFAULT_DAYS;
  const now = options.now ?? new Date();
  if (!(days > 0) || !Number.isFinite(days)) throw new RangeError(`days must be a positive number, got ${days}`);
  if (hosts.length === 0) throw new RangeError('hosts must name at least one DNS name or IP address');

  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  // DER allows no fractional seconds in certificate times, so work in whole seconds.
  const seconds = Math.floor(now.getTime() / 1000) * 1000;
  const notBefore = new Date(seconds - 3600 * 1000); // an hour of slack for clients whose clock is behind
  const notAfter = new Date(seconds + days * 24 * 3600 * 1000);

  const tbs = sequence(
    explicit(0, integer(2)), // v3, needed for extensions (RFC 5280 4.1.2.1)
    integer(serialNumber()),
    SIGNATURE_ALGORITHM,
    NAME, // issuer = subject: self-signed
    sequence(time(notBefore), time(notAfter)),
    NAME,
    publicKey.export({ type: 'spki', format: 'der' }),
    explicit(3, sequence(...extensions(hosts, publicKey))),
  );
  // For EC keys crypto.sign yields the DER Ecdsa-Sig-Value that X.509 expects (RFC 5758 3.2).
  const signature = sign('sha256', tbs, privateKey);
  const der = sequence(tbs, SIGNATURE_ALGORITHM, bitString(signature));
  return {
    cert: toPem('CERTIFICATE', der),
    key: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    fingerprint: fingerprint(der),
  };
}

/**
 * 16 random bytes: top bit clear so the INTEGER is positive, next bit set so it keeps all 16
 * octets and is never zero (RFC 5280 4.1.2.2 allows up to 20).
 */
function serialNumber(): Buffer {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0]! & 0x7f) | 0x40;
  return bytes;
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  // critical is DEFAULT FALSE, and DER omits a value equal to its default (X.690 11.5).
  return critical ? sequence(oid(id), boolean(true), octetString(value)) : sequence(oid(id), octetString(value));
}

function extensions(hosts: readonly string[], publicKey: KeyObject): Buffer[] {
  return [
    // cA DEFAULT FALSE is omitted, leaving an empty SEQUENCE: an end-entity certificate (4.2.1.9).
    extension(OID.basicConstraints, true, sequence()),
    // digitalSignature is bit 0; the named bit list drops trailing zero bits, so 7 are unused (4.2.1.3).
    extension(OID.keyUsage, true, bitString(Buffer.from([0x80]), 7)),
    extension(OID.extKeyUsage, false, sequence(oid(OID.serverAuth))),
    // Method (1) of RFC 5280 4.2.1.2: SHA-1 of the subjectPublicKey bits (04 || x || y for P-256).
    extension(OID.subjectKeyIdentifier, false, octetString(createHash('sha1').update(ecPoint(publicKey)).digest())),
    // The subject DN is not a host name; clients match the SAN only (4.2.1.6, RFC 6125).
    extension(OID.subjectAltName, false, sequence(...hosts.map(generalName))),
  ];
}

function ecPoint(publicKey: KeyObject): Buffer {
  const jwk = publicKey.export({ format: 'jwk' });
  return Buffer.concat([Buffer.from([4]), Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')]);
}

/** dNSName [2] IA5String or iPAddress [7] OCTET STRING of 4 or 16 octets (RFC 5280 4.2.1.6). */
function generalName(host: string): Buffer {
  if (isIPv4(host)) return implicit(7, octetString(Buffer.from(host.split('.').map(Number))));
  if (isIPv6(host)) return implicit(7, octetString(ipv6Bytes(host)));
  if (!/^(\*\.)?[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?(\.[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?)*$/.test(host)) {
    throw new TypeError(`not a DNS name or IP address: ${JSON.stringify(host)}`);
  }
  return implicit(2, ia5String(host.toLowerCase()));
}

/** Expands '::' and a trailing dotted quad into 16 octets; isIPv6 has already vetted the syntax. */
export function ipv6Bytes(address: string): Buffer {
  if (address.includes('%')) throw new TypeError(`a zone id has no place in a certificate: ${address}`);
  const groups = (part: string): number[] => {
    if (part === '') return [];
    return part.split(':').flatMap((group) => {
      if (!group.includes('.')) return [parseInt(group, 16)];
      const [a, b, c, d] = group.split('.').map(Number) as [number, number, number, number];
      return [(a << 8) | b, (c << 8) | d];
    });
  };
  const [head = '', tail] = address.split('::');
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const words = [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
  const out = Buffer.alloc(16);
  words.forEach((word, i) => out.writeUInt16BE(word, i * 2));
  return out;
}

function toPem(label: string, der: Buffer): string {
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}

function fingerprint(der: Buffer): string {
  const hex = createHash('sha256').update(der).digest('hex').toUpperCase();
  return hex.match(/../g)!.join(':');
}

export interface EnsuredCertificate extends SelfSignedCertificate {
  created: boolean;
  certFile: string;
  keyFile: string;
}

/**
 * Returns <stateDir>/tls/{cert,key}.pem, reusing them while they match and stay valid for
 * another week, else writing a fresh pair (CONTRACT section 5). The caller prints the fingerprint.
 */
export async function ensureCertificate(stateDir: string, now: Date = new Date()): Promise<EnsuredCertificate> {
  const dir = join(stateDir, 'tls');
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  const existing = await readUsable(certFile, keyFile, now);
  if (existing) return { ...existing, created: false, certFile, keyFile };

  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700); // mkdir leaves an existing directory's mode alone
  const fresh = createSelfSignedCertificate({ now });
  // Key first: a crash between the two renames leaves a cert that fails the key check, so it is redone.
  await writeAtomically(keyFile, fresh.key, 0o600);
  await writeAtomically(certFile, fresh.cert, 0o600); // public, but everything in the state directory is owner-only (issue 15)
  return { ...fresh, created: true, certFile, keyFile };
}

async function readUsable(certFile: string, keyFile: string, now: Date): Promise<SelfSignedCertificate | null> {
  let cert: string;
  let key: string;
  try {
    [cert, key] = await Promise.all([readFile(certFile, 'utf8'), readFile(keyFile, 'utf8')]);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  try {
    const x509 = new X509Certificate(cert);
    const validFrom = Date.parse(x509.validFrom);
    const validTo = Date.parse(x509.validTo);
    if (!(validFrom <= now.getTime() && validTo - now.getTime() > RENEW_BEFORE_MS)) return null;
    if (!x509.checkPrivateKey(createPrivateKey(key))) return null;
    return { cert, key, fingerprint: x509.fingerprint256 };
  } catch {
    return null; // unreadable or damaged PEM: replace it rather than refuse to start
  }
}

/** Temp file, fsync, rename: readers see the old file or the whole new one, never half a key. */
async function writeAtomically(file: string, contents: string, mode: number): Promise<void> {
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    const handle = await open(temp, 'wx', mode);
    try {
      await handle.writeFile(contents);
      await handle.chmod(mode); // open's mode is masked by the umask; make the result exact
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, file);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
}
