#!/usr/bin/env node
import { run } from "./program.js";

process.exit(await run(process.argv.slice(2)));
