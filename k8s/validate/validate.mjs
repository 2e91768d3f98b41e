// Validates rendered Kubernetes manifests offline: every object of every YAML file named on the
// command line is checked against the JSON schema that kubernetes-models bundles for its
// apiVersion and kind. Prints one line per failure, then "N passed, N failed"; exits non-zero if
// anything failed or no object was found. Unknown fields are not caught (the bundled schemas allow
// extra properties); `kubectl apply --dry-run=server` on a cluster does that.
import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";

// "apps/v1" -> kubernetes-models/apps/v1, "v1" -> kubernetes-models/v1.
async function modelFor(apiVersion, kind) {
  let module;
  try {
    module = await import(`kubernetes-models/${apiVersion}/${kind}`);
  } catch {
    return undefined;
  }
  return module[kind];
}

let passed = 0;
let failed = 0;
for (const file of process.argv.slice(2)) {
  const docs = parseAllDocuments(readFileSync(file, "utf8"));
  for (const doc of docs) {
    const where = `${file}:${doc.range ? doc.range[0] : 0}`;
    if (doc.errors.length > 0) {
      console.log(`FAIL ${where}: YAML: ${doc.errors[0].message}`);
      failed++;
      continue;
    }
    const object = doc.toJS();
    if (object === null) continue;  // an empty document
    const name = `${object.kind ?? "?"} ${object.metadata?.name ?? "?"}`;
    const Model = object.apiVersion && object.kind ? await modelFor(object.apiVersion, object.kind)
                                                   : undefined;
    if (Model === undefined) {
      console.log(`FAIL ${file}: ${name}: no schema for ${object.apiVersion} ${object.kind}`);
      failed++;
      continue;
    }
    try {
      new Model(object).validate();
      passed++;
    } catch (error) {
      const details = (error.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message}`);
      console.log(`FAIL ${file}: ${name}: ${details.length ? details.join("; ") : error.message}`);
      failed++;
    }
  }
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 || passed === 0 ? 1 : 0);
