export { redisRevocations, type Revocations } from "./revocations.js";
export {
  assertNotSanctioned,
  authenticate,
  forgetRevoked,
  CHALLENGE_TTL_S,
  KEY_PREFIX,
  KEY_TTL_S,
  SIGN_IN_CAPS,
  SIGN_IN_STATEMENT,
  type SignInCaps,
  type KeyRecord,
  type SignInDeps,
} from "./signin.js";
