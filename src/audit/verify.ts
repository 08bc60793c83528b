import { ChainRow, CleanScan, chainHash, genesisHash } from '../events/chain';
import { Checkpoint, checkpointDigest, keyIdOf, signatureValid } from './checkpoint';
import { AuditReceipt, receiptDigest, receiptSignatureValid } from './receipt';

export type ChainProblemKind = 'edited' | 'deleted' | 'inserted' | 'reordered' | 'truncated' | 'unchained' | 'forged_checkpoint' | 'checkpoint_missing' | 'bad_receipt';

export interface ChainProblem {
  /** The first log position this problem concerns. */
  position: number;
  kind: ChainProblemKind;
  message: string;
  /** For checkpoint problems: the checkpoint's seq. */
  checkpoint?: number;
  /** For a finding against a receipt: where the receipt came from (a file, or the witness). */
  witness?: string;
}

/** Receipts a verifier kept outside the database (docs/audit.md, "Receipts and the witness"). */
export interface WitnessInput {
  /** Where they come from, as the report names it: a file name, or `witness <file>`. */
  source: string;
  receipts: AuditReceipt[];
}

/** What the report says about one witness: how much it holds and the latest receipt that still holds. */
export interface WitnessReport {
  source: string;
  receipts: number;
  /** Its receipt of the highest seq. */
  latest: { seq: number; position: number; time: string } | null;
  ok: boolean;
}

export interface VerifyReport {
  workspace: string;
  ok: boolean;
  /** Events read; the log's last position. */
  events: number;
  headPosition: number;
  headHash: string;
  /** > 0 when the log existed before the chain: events 1..chainedFrom were hashed at the upgrade. */
  chainedFrom: number;
  checkpoints: number;
  /** The last checkpoint that is validly signed and matches the log, or null. */
  verifiedCheckpoint: { seq: number; position: number; time: string; keyId: string } | null;
  /** The key the checkpoint chain ends with (the one that signs new checkpoints). */
  keyId: string | null;
  /** Sorted by position; the first is the first broken position. */
  problems: ChainProblem[];
  firstBroken: number | null;
  /** One per witness the log was compared with (receipt files, the witness directory). */
  witnesses: WitnessReport[];
}

/** Where the rows come from: the store, or an exported file. Called again (from the start) to diagnose. */
export type ChainPages = () => AsyncIterable<ChainRow[]>;

/**
 * A faster pass over the same rows (src/audit/parallel-verify.ts: worker threads over ranges).
 * Answers null when anything did not hold; the streaming pass then runs and names the problem.
 */
export type FastScan = (wanted: Set<number>, genesis: string) => Promise<CleanScan | null>;

export interface VerifyInput {
  workspace: string;
  pages: ChainPages;
  fastScan?: FastScan;
  checkpoints: Checkpoint[];
  /** The key the verifier trusts (base64 SPKI): the checkpoint chain must end with it. Omit to trust the chain's own genesis key. */
  trustedPublicKey?: string;
  chainedFrom?: number;
  /** Receipts kept outside the database: each must still be in the log (position, chain hash) and among its checkpoints. */
  witnesses?: WitnessInput[];
}

/**
 * Recomputes the chain and checks every checkpoint. One streaming pass over the rows (each hash
 * recomputed from the stored hash of the row before it); only when a row fails does a second pass load
 * the stored hashes that tell an edit from a deletion, an insertion or a reordering (a failed row's
 * recorded position is recovered by trying the positions it could have been hashed for, since the
 * position is inside the hashed bytes).
 */
export async function verifyChain(input: VerifyInput): Promise<VerifyReport> {
  const { workspace } = input;
  const genesis = genesisHash(workspace);
  const problems: ChainProblem[] = [];
  const cps = checkCheckpoints(input, problems);
  const wanted = new Set(cps.valid.map((c) => c.position));
  for (const w of input.witnesses ?? []) for (const r of w.receipts) wanted.add(r.position);
  const hashAt = new Map<number, string | null>();

  let expected = 1;
  let prev = genesis;
  let broken: { position: number; row: ChainRow | null; reported?: boolean } | null = null;
  let last = 0;
  let lastHash = genesis;
  let count = 0;
  const clean = input.fastScan ? await input.fastScan(wanted, genesis) : null;
  if (clean) {
    ({ count, last } = clean);
    lastHash = last === 0 ? genesis : clean.lastHash;
    for (const [p, h] of clean.hashAt) hashAt.set(p, h);
  }
  if (!clean) for await (const page of input.pages()) {
    for (const row of page) {
      count++;
      last = row.position;
      lastHash = row.hash ?? '';
      if (wanted.has(row.position)) hashAt.set(row.position, row.hash);
      if (broken) continue;
      if (row.position !== expected) {
        broken = { position: expected, row: null };
        continue;
      }
      if (row.hash === null) {
        problems.push({ position: row.position, kind: 'unchained', message: `position ${row.position}: the event has no hash (written without the chain)` });
        broken = { position: row.position, row: null, reported: true };
        continue;
      }
      if (chainHash(prev, row) !== row.hash) broken = { position: row.position, row };
      prev = row.hash;
      expected++;
    }
  }
  if (broken && !broken.reported) problems.push(await diagnose(input.pages, broken.position, broken.row, genesis, last));

  let verified: VerifyReport['verifiedCheckpoint'] = null;
  for (const cp of cps.valid) {
    const stored = cp.position === 0 ? genesis : hashAt.get(cp.position);
    if (cp.position > last) {
      problems.push({ position: last + 1, kind: 'truncated', checkpoint: cp.seq, message: `position ${last + 1}: the log ends at ${last}, but checkpoint #${cp.seq} signed position ${cp.position} — events ${last + 1}..${cp.position} were removed` });
    } else if (stored !== cp.headHash) {
      // A chain already broken at or before this position explains the mismatch more precisely.
      if (broken && broken.position <= cp.position) continue;
      const from = (cps.valid.filter((c) => c.position < cp.position && c.seq < cp.seq).pop()?.position ?? 0) + 1;
      problems.push({ position: from, kind: 'edited', checkpoint: cp.seq, message: `positions ${from}..${cp.position}: checkpoint #${cp.seq} signed head hash ${cp.headHash.slice(0, 16)}… at ${cp.position}, the log now has ${String(stored).slice(0, 16)}… — events in this range were rewritten (and re-hashed) after it was signed` });
    } else if (!broken || broken.position > cp.position) {
      verified = { seq: cp.seq, position: cp.position, time: cp.time, keyId: cp.keyId };
    }
  }
  const witnesses = (input.witnesses ?? []).map((w) => checkWitness(w, input, cps.valid, { last, hashAt, genesis, brokenAt: broken?.position ?? null }, problems));
  problems.sort((a, b) => a.position - b.position);
  return {
    workspace,
    ok: problems.length === 0,
    events: count,
    headPosition: last,
    headHash: lastHash,
    chainedFrom: input.chainedFrom ?? cps.chainedFrom,
    checkpoints: input.checkpoints.length,
    verifiedCheckpoint: verified,
    keyId: cps.keyId,
    problems,
    firstBroken: problems.length ? problems[0].position : null,
    witnesses,
  };
}

/**
 * One witness against the log and its checkpoints. Each receipt must (1) be signed by the key it names,
 * (2) still be among the store's checkpoints — the same seq with the same digest, (3) lie within the log
 * (head ≥ its position: nothing below it was cut), and (4) have the chain hash the log has at its
 * position. The chain pass already recomputed every hash up to the head, so (4) compares with hashes
 * known to be the chain's; a chain broken at or before the position is reported by that pass instead.
 */
function checkWitness(
  w: WitnessInput,
  input: VerifyInput,
  valid: Checkpoint[],
  log: { last: number; hashAt: Map<number, string | null>; genesis: string; brokenAt: number | null },
  problems: ChainProblem[],
): WitnessReport {
  const before = problems.length;
  const stored = new Map(input.checkpoints.map((c) => [c.seq, c]));
  const signed = new Map(valid.map((c) => [c.seq, checkpointDigest(c)]));
  const lastStored = input.checkpoints[input.checkpoints.length - 1];
  let latest: AuditReceipt | null = null;
  // A witness of a long history could name thousands of receipts for one deletion: each kind is reported
  // at its first receipt, with the count of the others.
  const first = new Map<ChainProblemKind, ChainProblem & { more: number }>();
  for (const r of w.receipts) {
    if (!latest || r.seq > latest.seq) latest = r;
    const what = `checkpoint #${r.seq} (position ${r.position}, signed ${r.time})`;
    const add = (p: Omit<ChainProblem, 'witness' | 'checkpoint'>) => {
      const seen = first.get(p.kind);
      if (seen) seen.more++;
      else first.set(p.kind, { ...p, checkpoint: r.seq, witness: w.source, more: 0 });
    };
    if (r.workspace !== input.workspace) {
      add({ position: r.position, kind: 'bad_receipt', message: `${w.source}: ${what} belongs to workspace "${r.workspace}", not "${input.workspace}"` });
      continue;
    }
    const digest = receiptDigest(r);
    // A receipt identical to a checkpoint whose signature the chain check accepted needs no second check.
    if (signed.get(r.seq) !== digest && !receiptSignatureValid(r)) {
      add({ position: r.position, kind: 'bad_receipt', message: `${w.source}: ${what} is not validly signed by the key it names (${r.keyId})` });
      continue;
    }
    const cp = stored.get(r.seq);
    if (!cp) {
      add({ position: r.position, kind: 'checkpoint_missing', message: `position ${r.position}: ${what}, held by ${w.source}, is missing from the store, which holds ${lastStored ? `checkpoints up to #${lastStored.seq}` : 'no checkpoint'} — signed checkpoints were deleted` });
    } else if (checkpointDigest(cp) !== digest) {
      add({ position: r.position, kind: 'forged_checkpoint', message: `position ${r.position}: the store's checkpoint #${r.seq} is not the one ${w.source} holds (${what}) — it was replaced` });
    }
    if (r.position > log.last) {
      add({ position: log.last + 1, kind: 'truncated', message: `position ${log.last + 1}: the log ends at ${log.last}, but ${w.source} holds ${what} — events ${log.last + 1}..${r.position} were removed after it was signed` });
      continue;
    }
    if (log.brokenAt !== null && log.brokenAt <= r.position) continue;
    const hash = r.position === 0 ? log.genesis : log.hashAt.get(r.position);
    if (hash !== r.headHash) {
      add({ position: r.position, kind: 'edited', message: `position ${r.position}: ${w.source} holds ${what} with chain hash ${r.headHash.slice(0, 16)}…, the log now has ${String(hash).slice(0, 16)}… there — events at or before ${r.position} were rewritten (and re-hashed) after it was signed` });
    }
  }
  for (const { more, ...p } of first.values()) problems.push(more ? { ...p, message: `${p.message} (and ${more} later receipt(s) of ${w.source} likewise)` } : p);
  return { source: w.source, receipts: w.receipts.length, latest: latest ? { seq: latest.seq, position: latest.position, time: latest.time } : null, ok: problems.length === before };
}

/** Signatures, seq order and the `prev` links of the checkpoint chain; returns the ones that hold. */
/** The checkpoint chain checked so far: the key that signs the next checkpoint, and the digest its `prev` must name. */
interface CheckpointChain {
  activeKey: string | null;
  prevDigest: string | null;
  chainedFrom: number;
}

/**
 * Checks checkpoint `i` against the chain so far: in sequence, of this workspace, linked to the previous one, a
 * genesis carrying its key first and never again, signed by the active key (a rotation by both keys). Null when
 * it holds (the chain moves on: its digest, a rotation's new key), else why not (the chain keeps its digest).
 */
function nextCheckpoint(chain: CheckpointChain, cp: Checkpoint, i: number, workspace: string): string | null {
  if (cp.seq !== i) return `is out of sequence (expected #${i})`;
  if (cp.workspace !== workspace) return `belongs to workspace "${cp.workspace}"`;
  if (cp.prev !== chain.prevDigest) return 'does not link to the previous checkpoint';
  if (i === 0) {
    if (cp.kind !== 'genesis' || typeof cp.publicKey !== 'string' || keyIdOf(cp.publicKey) !== cp.keyId) return 'is not a genesis carrying its signing key';
    chain.activeKey = cp.publicKey;
    chain.chainedFrom = cp.chainedFrom ?? 0;
  } else if (cp.kind === 'genesis') return 'is a second genesis';
  const key = chain.activeKey;
  if (key === null || cp.keyId !== keyIdOf(key) || !signatureValid(cp, cp.sig, key)) return `is not signed by the active key ${key === null ? '(none)' : keyIdOf(key)}`;
  if (cp.kind === 'key_rotation') {
    if (typeof cp.newPublicKey !== 'string' || keyIdOf(cp.newPublicKey) !== cp.newKeyId || !signatureValid(cp, cp.newSig, cp.newPublicKey)) return 'rotates to a key that did not sign it';
    chain.activeKey = cp.newPublicKey;
  }
  chain.prevDigest = checkpointDigest(cp);
  return null;
}

/** Signatures, seq order and the `prev` links of the checkpoint chain; returns the ones that hold. */
function checkCheckpoints(input: VerifyInput, problems: ChainProblem[]): { valid: Checkpoint[]; keyId: string | null; chainedFrom: number } {
  const valid: Checkpoint[] = [];
  const chain: CheckpointChain = { activeKey: null, prevDigest: null, chainedFrom: 0 };
  input.checkpoints.forEach((cp, i) => {
    const why = nextCheckpoint(chain, cp, i, input.workspace);
    if (why === null) valid.push(cp);
    else problems.push({ position: Number(cp.position) || 0, kind: 'forged_checkpoint', checkpoint: cp.seq, message: `position ${cp.position}: checkpoint #${cp.seq} ${why}` });
  });
  const { activeKey, chainedFrom } = chain;
  if (activeKey && input.trustedPublicKey && activeKey !== input.trustedPublicKey && valid.length) {
    const first = valid[0];
    problems.push({ position: first.position, kind: 'forged_checkpoint', checkpoint: first.seq, message: `position ${first.position}: the checkpoint chain ends with key ${keyIdOf(activeKey)}, not the trusted key ${keyIdOf(input.trustedPublicKey)}` });
    return { valid: [], keyId: keyIdOf(activeKey), chainedFrom };
  }
  return { valid, keyId: activeKey ? keyIdOf(activeKey) : null, chainedFrom };
}

/**
 * Names what happened at the first broken position p (the first row whose hash is not the hash of its
 * content over the stored hash before it). `recorded(row)` is the position a row's hash was computed
 * for: tried are every position q with the hash now stored at q − 1 as its predecessor (a row moved
 * far away, its predecessor still in place), and the positions around p with the hashes stored around
 * p (neighbours moved together). A row that is intact but recorded elsewhere was moved; one that
 * matches nowhere was edited.
 *
 * The hash a row links to is not stored with it (it is the previous row's), so one case reads like
 * another: an event edited and re-hashed in place breaks the link to the NEXT event, exactly as an edit
 * of that next event does. Both are reported at the next event's position, as `edited`, and the
 * message names the other reading. A signed checkpoint past them still pins down the range.
 */
async function diagnose(pages: ChainPages, p: number, row: ChainRow | null, genesis: string, last: number): Promise<ChainProblem> {
  // The stored hash at each position (index 0: the genesis): one string per event, only when broken.
  const stored: Array<string | null> = [genesis];
  let next: ChainRow | null = null;
  for await (const page of pages()) {
    for (const r of page) {
      if (r.position >= 0 && r.position < 1e9) stored[r.position] = r.hash;
      if (r.position === p + 1) next = r;
    }
  }
  if (!row) {
    const found = next ? `the next stored position is ${p + 1}` : `the log ends at ${last}`;
    return { position: p, kind: 'deleted', message: `position ${p}: missing (${found}) — the event was deleted` };
  }
  const near = [p - 2, p - 1, p, p + 1, p + 2].map((i) => (i >= 0 ? stored[i] : null)).filter((h): h is string => typeof h === 'string');
  const recorded = (r: ChainRow | null, at: number): number | null => {
    if (!r || r.hash === null) return null;
    for (const q of [at, at + 1, at - 1, at + 2]) {
      if (q <= 0) continue;
      for (const prev of [stored[q - 1], ...near]) if (typeof prev === 'string' && chainHash(prev, { ...r, position: q }) === r.hash) return q;
    }
    for (let q = 1; q < stored.length + 1; q++) {
      const prev = stored[q - 1];
      if (typeof prev === 'string' && chainHash(prev, { ...r, position: q }) === r.hash) return q;
    }
    return null;
  };
  const q = recorded(row, p);
  const qNext = recorded(next, p + 1);
  if (q === p + 1 && qNext === p) return { position: p, kind: 'reordered', message: `position ${p}: holds the event recorded at ${p + 1} (positions ${p} and ${p + 1} were swapped)` };
  if (q === p + 1 || (q === null && qNext === p + 2)) return { position: p, kind: 'deleted', message: `position ${p}: holds the event recorded at ${p + 1} — the original event ${p} was deleted and later positions renumbered` };
  if (q === p - 1) return { position: p - 1, kind: 'inserted', message: `position ${p - 1}: not part of the chain — the event now at ${p} was recorded at ${p - 1}, so an event was inserted before it` };
  if (q !== null && q !== p) return { position: p, kind: 'reordered', message: `position ${p}: holds the event recorded at position ${q}` };
  if (qNext === p) return { position: p, kind: 'inserted', message: `position ${p}: not part of the chain — the event now at ${p + 1} was recorded at ${p}, so this one was inserted` };
  return { position: p, kind: 'edited', message: `position ${p}: the stored event (data, metadata, type, stream, revision or id) does not match its hash over the chain — it was edited${p > 1 ? `, or event ${p - 1} was rewritten and re-hashed in place (both break the link into ${p})` : ''}` };
}

/** One line per fact, for the CLI. */
export function formatReport(r: VerifyReport): string {
  const lines: string[] = [];
  lines.push(`workspace ${r.workspace}: ${r.events} events, head ${r.headPosition}, ${r.checkpoints} checkpoint(s)${r.keyId ? `, key ${r.keyId}` : ''}`);
  if (r.chainedFrom > 0) lines.push(`chained from position ${r.chainedFrom}: events 1..${r.chainedFrom} existed before the chain and were hashed at the upgrade (their earlier history is not attested)`);
  if (r.ok) {
    lines.push(`OK: the chain verifies through position ${r.headPosition}`);
    lines.push(r.verifiedCheckpoint ? `signed checkpoint #${r.verifiedCheckpoint.seq} covers positions 1..${r.verifiedCheckpoint.position} (${r.verifiedCheckpoint.time})${r.verifiedCheckpoint.position < r.headPosition ? `; ${r.headPosition - r.verifiedCheckpoint.position} later event(s) are chained but not yet signed` : ''}` : 'no signed checkpoint yet: the chain is consistent, but nothing signed anchors it');
  } else {
    lines.push(`BROKEN at position ${r.firstBroken}: ${r.problems[0].kind} — ${r.problems[0].message}`);
    for (const p of r.problems.slice(1, 10)) lines.push(`  also: ${p.kind} — ${p.message}`);
    if (r.verifiedCheckpoint) lines.push(`last checkpoint that still holds: #${r.verifiedCheckpoint.seq} at position ${r.verifiedCheckpoint.position}`);
  }
  for (const w of r.witnesses) {
    const latest = w.latest ? `, the latest #${w.latest.seq} at position ${w.latest.position} (${w.latest.time})` : '';
    lines.push(`${w.source}: ${w.receipts} receipt(s)${latest}${w.receipts === 0 ? ': nothing to compare yet' : w.ok ? ': the log still holds them' : ': the log does NOT hold them (see above)'}`);
  }
  return lines.join('\n') + '\n';
}

/**
 * What a verification that found nothing wrong established, enough to extend it to a longer log without
 * reading the verified part again (extendVerified): the chain up to `headPosition` recomputed and intact,
 * and the first `checkpoints` stored checkpoints validly signed, linked and matching the log.
 */
export interface VerifiedTip {
  workspace: string;
  headPosition: number;
  headHash: string;
  chainedFrom: number;
  checkpoints: number;
  /** checkpointDigest of the last of them (the next one's `prev`), and the key that signs the next one (base64 SPKI). */
  lastDigest: string | null;
  activeKey: string | null;
  verifiedCheckpoint: VerifyReport['verifiedCheckpoint'];
}

/** The tip a clean report establishes over `checkpoints` (the list it verified); null when it found a problem. */
export function tipOf(report: VerifyReport, checkpoints: Checkpoint[]): VerifiedTip | null {
  if (!report.ok || report.checkpoints !== checkpoints.length) return null;
  let activeKey: string | null = null;
  for (const cp of checkpoints) {
    if (cp.kind === 'genesis') activeKey = cp.publicKey ?? null;
    else if (cp.kind === 'key_rotation') activeKey = cp.newPublicKey ?? null;
  }
  const last = checkpoints[checkpoints.length - 1];
  return {
    workspace: report.workspace,
    headPosition: report.headPosition,
    headHash: report.headHash,
    chainedFrom: report.chainedFrom,
    checkpoints: checkpoints.length,
    lastDigest: last ? checkpointDigest(last) : null,
    activeKey,
    verifiedCheckpoint: report.verifiedCheckpoint,
  };
}

/**
 * Extends a verified tip over what was added since: the rows past its head (each at the next position,
 * chained, its hash recomputed from the one before — the tip's hash for the first) and the checkpoints past
 * its count (in sequence, linked to the one before, signed by the active key — a rotation's by both —,
 * each matching the hash the log has at its position), and the tip's checkpoints still linked to the same
 * digests. The same checks verifyChain makes, over the new
 * part only. Null when anything does not hold: the caller then verifies the whole log, which names the problem. Rows at or before the tip are
 * not read again, so an edit among them is found by the next whole verification, not here.
 */
export async function extendVerified(
  tip: VerifiedTip,
  input: { pages: ChainPages; checkpoints: Checkpoint[]; hashAt: (position: number) => Promise<string | null>; trustedPublicKey?: string; chainedFrom: number },
): Promise<VerifiedTip | null> {
  if (input.chainedFrom !== tip.chainedFrom || input.checkpoints.length < tip.checkpoints) return null;
  // The checkpoints verified before are still those (a replaced one changes its digest, so the link after it or the last digest).
  let digest: string | null = null;
  for (let i = 0; i < tip.checkpoints; i++) {
    const cp = input.checkpoints[i];
    if (cp.seq !== i || cp.prev !== digest) return null;
    digest = checkpointDigest(cp);
  }
  if (digest !== tip.lastDigest) return null;
  let expected = tip.headPosition + 1;
  let prev = tip.headHash;
  const added = new Map<number, string>();
  for await (const page of input.pages()) {
    for (const row of page) {
      if (row.position !== expected || row.hash === null || chainHash(prev, row) !== row.hash) return null;
      added.set(row.position, row.hash);
      prev = row.hash;
      expected++;
    }
  }
  const head = expected - 1;
  const chain: CheckpointChain = { activeKey: tip.activeKey, prevDigest: tip.lastDigest, chainedFrom: tip.chainedFrom };
  let verified = tip.verifiedCheckpoint;
  for (let i = tip.checkpoints; i < input.checkpoints.length; i++) {
    const cp = input.checkpoints[i];
    if (nextCheckpoint(chain, cp, i, tip.workspace) !== null || cp.position > head) return null;
    const stored = cp.position === 0 ? genesisHash(tip.workspace) : cp.position === tip.headPosition ? tip.headHash : (added.get(cp.position) ?? (await input.hashAt(cp.position)));
    if (stored !== cp.headHash) return null;
    verified = { seq: cp.seq, position: cp.position, time: cp.time, keyId: cp.keyId };
  }
  const { activeKey, prevDigest: lastDigest } = chain;
  if (input.trustedPublicKey && activeKey !== null && activeKey !== input.trustedPublicKey) return null;
  return { ...tip, headPosition: head, headHash: prev, checkpoints: input.checkpoints.length, lastDigest, activeKey, verifiedCheckpoint: verified };
}
