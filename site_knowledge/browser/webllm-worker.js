// WebLLM runs in its own worker so that loading and generation never block the page.
import { WebWorkerMLCEngineHandler } from "./vendor/web-llm/index.js";

const handler = new WebWorkerMLCEngineHandler();
self.onmessage = (message) => handler.onmessage(message);
