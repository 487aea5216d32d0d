import { memoryBackend } from "@soniq/backend-memory";
import { Soniq } from "@soniq/core";

const soniq = new Soniq({ backend: memoryBackend() });
