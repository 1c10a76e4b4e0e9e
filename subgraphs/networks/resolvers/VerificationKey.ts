import type { VerificationKeyResolvers } from "../generated/resolvers-types.ts";

interface VerificationKeyHeader {
  protocol: string;
  curve: string;
  nPublic: number;
}

// Keys change only when a network is re-registered; parse each distinct key once per process.
const headers = new Map<string, VerificationKeyHeader>();

function header(json: string, sha256: string): VerificationKeyHeader {
  let parsed = headers.get(sha256);
  if (!parsed) {
    const { protocol, curve, nPublic } = JSON.parse(json) as VerificationKeyHeader;
    parsed = { protocol, curve, nPublic };
    headers.set(sha256, parsed);
  }
  return parsed;
}

export const VerificationKey: VerificationKeyResolvers = {
  protocol: (network) => header(network.verificationKeyJson, network.verificationKeySha256).protocol,
  curve: (network) => header(network.verificationKeyJson, network.verificationKeySha256).curve,
  nPublic: (network) => header(network.verificationKeyJson, network.verificationKeySha256).nPublic,
  json: (network) => network.verificationKeyJson,
  sha256: (network) => network.verificationKeySha256,
};
