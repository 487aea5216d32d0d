// Placeholder until the example app lands (see apps/example/README.md).
console.log("The Soniq example app is not built yet; this command will run its scripted tour once it is.");
