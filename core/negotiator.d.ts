// The part of `negotiator` (no published types) that core/accept.ts uses.
declare module "negotiator" {
  export default class Negotiator {
    constructor(request: { headers: Record<string, string | string[] | undefined> });
    mediaType(available?: string[]): string | undefined;
  }
}
