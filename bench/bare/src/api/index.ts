import { Hono } from "hono";

export default new Hono();
