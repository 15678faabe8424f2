/**
 * `f` kept by the identity of its argument: called once per object, its answer given again for the same object while
 * that object lives (a WeakMap: nothing is held past it). Only for arguments never changed in place: the standings
 * worker's kept lists are replaced when they change (api/league/kept.ts), so the same list is the same trades, and
 * what is derived from it need not be derived again each pass (issue 29 point 6).
 */
export function byIdentity<A extends object, B>(f: (a: A) => B): (a: A) => B {
  const memo = new WeakMap<A, B>();
  return (a) => {
    if (memo.has(a)) return memo.get(a) as B;
    const b = f(a);
    memo.set(a, b);
    return b;
  };
}
