import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Hex, LocalAccount } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { contractProblem } from "../../test/helpers/contract.js";

type Answer = { status: number; json: unknown };

/**
 * A stand-in for the service that relays every request to the real one and can change what goes
 * either way: `tamperRequest` edits a request body, `tamper` edits a successful answer, `handle`
 * answers a request itself (it may forward first and then answer otherwise). Every answer of the
 * real service is held to the OpenAPI document first (CONTRACT_BROKEN when it breaks it).
 */
export async function startHostile(upstream: () => string) {
  const h = {
    url: "",
    tamper: null as ((path: string, body: any) => any | Promise<any>) | null,
    tamperRequest: null as ((path: string, body: any) => any) | null,
    handle: null as ((path: string, body: any, forward: () => Promise<Answer>) => Promise<Answer | undefined>) | null,
    reset() {
      h.tamper = null;
      h.tamperRequest = null;
      h.handle = null;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const path = req.url ?? "";
    let reqBody: Buffer | string | undefined = chunks.length ? Buffer.concat(chunks) : undefined;
    if (h.tamperRequest && reqBody) reqBody = JSON.stringify(h.tamperRequest(path, JSON.parse(String(reqBody))));
    const forward = async (): Promise<Answer> => {
      const headers: Record<string, string> = {
        ...(req.headers as Record<string, string>),
        host: new URL(upstream()).host,
      };
      if (reqBody !== undefined) headers["content-length"] = String(Buffer.byteLength(reqBody));
      const up = await fetch(`${upstream()}${path}`, { method: req.method, headers, body: reqBody });
      const text = await up.text();
      let json: unknown = null;
      try {
        json = text ? JSON.parse(text) : null;
      } catch {
        json = text;
      }
      // The real service's answer must be one its OpenAPI document describes (before any tampering).
      const problem = contractProblem(req.method ?? "GET", path, up.status, json);
      if (problem) return { status: 500, json: { error: { code: "CONTRACT_BROKEN", message: problem } } };
      return { status: up.status, json };
    };
    let answer: Answer;
    try {
      answer =
        (h.handle ? await h.handle(path, reqBody ? JSON.parse(String(reqBody)) : null, forward) : undefined) ??
        (await forward());
      if (h.tamper && answer.status < 300) answer = { ...answer, json: await h.tamper(path, answer.json) };
    } catch (err) {
      answer = { status: 200, json: { error: { code: "TAMPER_BROKE", message: String(err) } } };
    }
    res.writeHead(answer.status, { "content-type": "application/json" });
    res.end(JSON.stringify(answer.json));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  h.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return h;
}
export type Hostile = Awaited<ReturnType<typeof startHostile>>;

/** An account that counts what it signs. */
export function counted(
  pk: Hex = generatePrivateKey(),
): LocalAccount & { signed: { tx: number; msg: number; typed: number } } {
  const a = privateKeyToAccount(pk);
  const signed = { tx: 0, msg: 0, typed: 0 };
  return {
    ...a,
    signed,
    signTransaction: (tx, o) => ((signed.tx += 1), a.signTransaction(tx, o)),
    signMessage: (m) => ((signed.msg += 1), a.signMessage(m)),
    signTypedData: (t) => ((signed.typed += 1), a.signTypedData(t as never)),
  } as LocalAccount & { signed: typeof signed };
}
