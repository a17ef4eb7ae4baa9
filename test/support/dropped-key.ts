// A value sealed under an encryption key the app no longer has (one dropped from the key ring
// too early): the sealed form kept, naming a key id none of the configured keys has.
export function sealedUnderDroppedKey(sealed: string): string {
  const parts = sealed.split(":");
  parts[1] = "dropped-key";
  return parts.join(":");
}
