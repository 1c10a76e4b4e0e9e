// Minimal ambient types for the untyped zk libraries, covering only what zk/ uses.
// Values are typed as `unknown` where the libraries accept loosely shaped input, so no `any`
// leaks into callers.

declare module "snarkjs" {
  /** snarkjs logger shape: snarkjs calls every method unguarded once a logger is given. */
  export interface SnarkjsLogger {
    debug(msg: string): void;
    info(msg: string): void;
    warn(msg: string): void;
    error(msg: string): void;
  }

  /** A Groth16 proof as snarkjs emits it (declared once, in zk/proof-shape.ts). */
  export type Groth16ProofJson = import("./proof-shape.ts").SnarkjsProof;

  export type Groth16VerificationKeyJson = import("./proof-shape.ts").Groth16VerificationKey;

  /** Circuit input: signal name → decimal string / bigint / number (or nested arrays). */
  export type CircuitSignals = Record<string, unknown>;

  export const groth16: {
    fullProve(
      input: CircuitSignals,
      wasmFile: string | Uint8Array,
      zkeyFile: string | Uint8Array,
      logger?: SnarkjsLogger,
    ): Promise<{ proof: Groth16ProofJson; publicSignals: string[] }>;
    verify(verificationKey: unknown, publicSignals: unknown, proof: unknown, logger?: SnarkjsLogger): Promise<boolean>;
    exportSolidityCallData(proof: unknown, publicSignals: unknown): Promise<string>;
  };

  export const powersOfTau: {
    newAccumulator(curve: unknown, power: number, fileName: string, logger?: SnarkjsLogger): Promise<unknown>;
    contribute(oldPtauFilename: string, newPtauFilename: string, name: string, entropy: string, logger?: SnarkjsLogger): Promise<unknown>;
    beacon(
      oldPtauFilename: string,
      newPtauFilename: string,
      name: string,
      beaconHashHex: string,
      numIterationsExp: number,
      logger?: SnarkjsLogger,
    ): Promise<unknown>;
    preparePhase2(oldPtauFilename: string, newPtauFilename: string, logger?: SnarkjsLogger): Promise<void>;
    verify(ptauFilename: string, logger?: SnarkjsLogger): Promise<boolean>;
  };

  export const zKey: {
    newZKey(r1csName: string, ptauName: string, zkeyName: string, logger?: SnarkjsLogger): Promise<unknown>;
    contribute(zkeyNameOld: string, zkeyNameNew: string, name: string, entropy: string, logger?: SnarkjsLogger): Promise<unknown>;
    beacon(zkeyNameOld: string, zkeyNameNew: string, name: string, beaconHashHex: string, numIterationsExp: number, logger?: SnarkjsLogger): Promise<unknown>;
    verifyFromR1cs(r1csName: string, ptauName: string, zkeyName: string, logger?: SnarkjsLogger): Promise<boolean>;
    exportVerificationKey(zkeyName: string, logger?: SnarkjsLogger): Promise<Groth16VerificationKeyJson>;
    exportSolidityVerifier(zkeyName: string, templates: Record<string, string>, logger?: SnarkjsLogger): Promise<string>;
  };

  export interface SnarkjsCurve {
    terminate(): Promise<void>;
  }

  /** A field of ffjavascript's wasm curve; elements are byte buffers (Montgomery form). */
  export interface WasmField<Coordinates> {
    readonly n8: number;
    readonly zero: Uint8Array;
    readonly one: Uint8Array;
    fromObject(value: Coordinates): Uint8Array;
    toObject(value: Uint8Array): Coordinates;
    add(a: Uint8Array, b: Uint8Array): Uint8Array;
    mul(a: Uint8Array, b: Uint8Array): Uint8Array;
    square(a: Uint8Array): Uint8Array;
    neg(a: Uint8Array): Uint8Array;
    eq(a: Uint8Array, b: Uint8Array): boolean;
    isSquare(a: Uint8Array): boolean;
    sqrt(a: Uint8Array): Uint8Array;
  }

  /** A group of ffjavascript's wasm curve; points are byte buffers (affine or Jacobian). */
  export interface CurveGroup<Coordinates> {
    readonly zero: Uint8Array;
    /** The generator (Jacobian). */
    readonly g: Uint8Array;
    /** The curve's coefficient b (y² = x³ + b). */
    readonly b: Uint8Array;
    fromObject(point: Coordinates): Uint8Array;
    toJacobian(point: Uint8Array): Uint8Array;
    toAffine(point: Uint8Array): Uint8Array;
    toObject(point: Uint8Array): Coordinates;
    neg(point: Uint8Array): Uint8Array;
    add(a: Uint8Array, b: Uint8Array): Uint8Array;
    double(a: Uint8Array): Uint8Array;
    /** Same point (any mix of affine and Jacobian). */
    eq(a: Uint8Array, b: Uint8Array): boolean;
    timesScalar(point: Uint8Array, scalar: bigint): Uint8Array;
    /** On the curve (the point at infinity included); no subgroup check. */
    isValid(point: Uint8Array): boolean;
    isZero(point: Uint8Array): boolean;
  }

  export interface WasmThreadManager {
    readonly memory: WebAssembly.Memory;
    /** u32[0] is the first free byte of the wasm memory (a bump allocator). */
    readonly u32: Uint32Array;
    readonly instance: { readonly exports: Record<string, (...args: number[]) => number> };
    alloc(length: number): number;
    allocBuff(buffer: Uint8Array): number;
    setBuff(pointer: number, buffer: Uint8Array): void;
    getBuff(pointer: number, length: number): Uint8Array;
    /** Frees everything allocated since: startSyncOp()/endSyncOp() bracket one synchronous computation. */
    startSyncOp(): void;
    endSyncOp(): void;
  }

  /** What zk/batch-verify.ts uses of ffjavascript's BN254 (bn128) curve. */
  export interface Bn128Curve extends SnarkjsCurve {
    /** The order of G1, G2 and Gt (the scalar field modulus). */
    readonly r: bigint;
    readonly G1: CurveGroup<bigint[]> & { readonly F: WasmField<bigint> };
    readonly G2: CurveGroup<bigint[][]> & { readonly F: WasmField<bigint[]> & { readonly F: WasmField<bigint> } };
    readonly Gt: { readonly one: Uint8Array; mul(a: Uint8Array, b: Uint8Array): Uint8Array; eq(a: Uint8Array, b: Uint8Array): boolean };
    /** "bn128": the prefix of its wasm exports. */
    readonly name: string;
    /** Bytes of a prepared G1 point / a prepared G2 point (its line coefficients). */
    readonly prePSize: number;
    readonly preQSize: number;
    /** The wasm instance's memory manager (single-threaded curves: the only user of that memory). */
    readonly tm: WasmThreadManager;
    prepareG1(jacobian: Uint8Array): Uint8Array;
    prepareG2(jacobian: Uint8Array): Uint8Array;
    millerLoop(preparedP: Uint8Array, preparedQ: Uint8Array): Uint8Array;
    finalExponentiation(a: Uint8Array): Uint8Array;
  }

  export const curves: {
    /** singleThread: a private wasm instance without worker threads (else the shared global one). */
    getCurveFromName(name: string, options?: { singleThread?: boolean }): Promise<Bn128Curve>;
  };
}

declare module "circomlibjs" {
  /** A field element in circomlibjs' internal (Montgomery) representation. */
  export type PoseidonFieldElement = Uint8Array;

  export interface PoseidonField {
    /** Internal representation → canonical bigint in [0, p). */
    toObject(a: PoseidonFieldElement): bigint;
    e(a: bigint | number | string): PoseidonFieldElement;
    readonly p: bigint;
  }

  export interface Poseidon {
    (inputs: ReadonlyArray<bigint | number | string | PoseidonFieldElement>): PoseidonFieldElement;
    readonly F: PoseidonField;
  }

  export function buildPoseidon(): Promise<Poseidon>;
}
