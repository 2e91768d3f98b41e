// Prints one container's args from rendered manifests, one per line, so that a test can run the
// exact command lines a cluster would: node args.mjs FILE DEPLOYMENT CONTAINER
// With "configmap NAME-PREFIX KEY" instead, prints that ConfigMap entry; with a fourth argument
// naming a probe (readinessProbe, livenessProbe), prints its exec command, one word per line (or
// a gRPC probe's "port service") instead of args.
import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";

const [file, what, name, key] = process.argv.slice(2);
const objects = parseAllDocuments(readFileSync(file, "utf8")).map((d) => d.toJS());
let found;
if (what === "configmap") {
  const map = objects.find((o) => o?.kind === "ConfigMap" && o.metadata.name.startsWith(name));
  found = map?.data?.[key];
  if (found !== undefined) process.stdout.write(found);
} else {
  const deployment = objects.find((o) => o?.kind === "Deployment" && o.metadata.name === what);
  const spec = deployment?.spec?.template?.spec;
  const containers = [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])];
  const container = containers.find((c) => c.name === name);
  if (key === undefined) {
    found = container?.args;
    if (found !== undefined) process.stdout.write(found.map((a) => `${a}\n`).join(""));
  } else {
    const probe = container?.[key];
    if (probe?.exec?.command !== undefined) {
      found = probe.exec.command;
      process.stdout.write(found.map((a) => `${a}\n`).join(""));
    } else {
      found = probe?.grpc;
      if (found !== undefined) process.stdout.write(`${found.port} ${found.service ?? ""}\n`);
    }
  }
}
if (found === undefined) {
  console.error(`${file}: no ${what} ${name}${key ? ` ${key}` : ""}`);
  process.exit(1);
}
