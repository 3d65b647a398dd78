/**
 * Pinned SSH host keys: the key blobs named by a `hostKey` setting (known_hosts
 * lines, plain or hashed, with an optional marker, or bare base64 blobs). Only
 * the blob is kept, because the spec compares the key and never the host name.
 */
import { Buffer } from "node:buffer"
import { createHash } from "node:crypto"

// A key type as written in known_hosts lines (the same set ConnectionRules accepts).
const keyTypeRegExp = /^(ssh-(rsa|dss|ed25519|ed448)|ecdsa-sha2-nistp(256|384|521)|sk-(ssh-ed25519|ecdsa-sha2-nistp256)@openssh\.com)$/
const base64RegExp = /^[A-Za-z0-9+/]+={0,2}$/

const blobOfLine = (line: string): Buffer | undefined => {
  const tokens = line.split(/\s+/)
  if (tokens.length === 1) {
    const only = tokens[0] ?? ""
    return base64RegExp.test(only) ? Buffer.from(only, "base64") : undefined
  }
  // `[@marker] hosts keytype blob [comment]`: the blob follows the first key type.
  const at = tokens.findIndex((t) => keyTypeRegExp.test(t))
  const blob = at < 0 ? undefined : tokens[at + 1]
  return blob !== undefined && base64RegExp.test(blob) ? Buffer.from(blob, "base64") : undefined
}

/** The pinned keys of a `hostKey` setting: the accepted blobs, and those a `@revoked` line names. */
export interface Pins {
  readonly accepted: ReadonlyArray<Buffer>
  readonly revoked: ReadonlyArray<Buffer>
}

/**
 * The key blobs of every usable line of a pinned `hostKey`; comments and blank
 * lines are skipped. A `@revoked` line never pins its key: it revokes it, as in
 * known_hosts, so that key is refused even when another line lists it.
 */
export const pins = (hostKey: string): Pins => {
  const accepted: Array<Buffer> = []
  const revoked: Array<Buffer> = []
  for (const raw of hostKey.split(/\r?\n/)) {
    const line = raw.trim()
    if (line === "" || line.startsWith("#")) continue
    const blob = blobOfLine(line)
    if (blob === undefined || blob.length === 0) continue
    if (/^@revoked\s/i.test(line)) revoked.push(blob)
    else accepted.push(blob)
  }
  return { accepted, revoked }
}

/** Whether a presented host key blob is pinned: equal to an accepted blob and to no revoked one. */
export const matches = (pinned: Pins, presented: Buffer): boolean =>
  pinned.accepted.some((blob) => blob.equals(presented)) && !pinned.revoked.some((blob) => blob.equals(presented))

/** The key type written inside an SSH public key blob (its first length-prefixed string). */
export const blobKeyType = (blob: Buffer): string | undefined => {
  if (blob.length < 4) return undefined
  const length = blob.readUInt32BE(0)
  if (length === 0 || length > 64 || blob.length < 4 + length) return undefined
  return blob.subarray(4, 4 + length).toString("latin1")
}

/** OpenSSH's fingerprint of a key blob (`SHA256:` and unpadded base64), safe to show. */
export const fingerprint = (blob: Buffer): string =>
  `SHA256:${createHash("sha256").update(blob).digest("base64").replace(/=+$/, "")}`

type HostKeyAlgorithm =
  | "ssh-ed25519"
  | "ecdsa-sha2-nistp256"
  | "ecdsa-sha2-nistp384"
  | "ecdsa-sha2-nistp521"
  | "rsa-sha2-512"
  | "rsa-sha2-256"
  | "ssh-rsa"
  | "ssh-dss"

const algorithmsByKeyType: Record<string, ReadonlyArray<HostKeyAlgorithm>> = {
  "ssh-ed25519": ["ssh-ed25519"],
  "ecdsa-sha2-nistp256": ["ecdsa-sha2-nistp256"],
  "ecdsa-sha2-nistp384": ["ecdsa-sha2-nistp384"],
  "ecdsa-sha2-nistp521": ["ecdsa-sha2-nistp521"],
  "ssh-rsa": ["rsa-sha2-512", "rsa-sha2-256", "ssh-rsa"],
  "ssh-dss": ["ssh-dss"]
}

/**
 * The host key algorithms to offer so the server presents a key of a pinned type:
 * a bastion usually has several host keys, and without this it may present one
 * that was not pinned although a pinned one exists. Undefined leaves the defaults.
 */
export const hostKeyAlgorithms = (blobs: ReadonlyArray<Buffer>): Array<HostKeyAlgorithm> | undefined => {
  const algorithms = new Set<HostKeyAlgorithm>()
  for (const blob of blobs) {
    const type = blobKeyType(blob)
    for (const algorithm of (type === undefined ? undefined : algorithmsByKeyType[type]) ?? []) algorithms.add(algorithm)
  }
  return algorithms.size === 0 ? undefined : [...algorithms]
}
