// Validates Kubernetes objects against the API schemas of npm's kubernetes-models (core and
// apps/batch/policy/networking/autoscaling) and its CRD packages (prometheus-operator, KEDA).
//
//   helm template ... | node validate.js NODE_MODULES_DIR
//
// Reads a multi-document YAML stream on stdin; prints one line per object; exits 1 when any
// object fails its schema or has a kind no package models, 2 when nothing was read.
"use strict";
const path = require("path");
const modules = path.resolve(process.argv[2] || "node_modules");
const yaml = require(path.join(modules, "js-yaml"));

// apiVersion "group/version" or "version" → the module that models `kind`.
function modelPath(apiVersion, kind) {
  const crdPackages = {
    "monitoring.coreos.com": "@kubernetes-models/prometheus-operator",
    "keda.sh": "@kubernetes-models/keda",
  };
  const parts = apiVersion.split("/");
  if (parts.length === 1) return path.join(modules, "kubernetes-models", parts[0], kind);
  const [group, version] = parts;
  const pkg = crdPackages[group] || "kubernetes-models";
  return path.join(modules, pkg, group, version, kind);
}

const input = require("fs").readFileSync(0, "utf8");
let failed = 0;
let count = 0;
for (const doc of yaml.loadAll(input)) {
  if (doc === null || doc === undefined) continue;
  count++;
  const name = `${doc.kind}/${doc.metadata && doc.metadata.name}`;
  let Model;
  try {
    Model = require(modelPath(doc.apiVersion, doc.kind))[doc.kind];
  } catch (e) {
    console.log(`FAIL ${name}: no schema for ${doc.apiVersion} ${doc.kind}`);
    failed++;
    continue;
  }
  try {
    new Model(doc).validate();
    console.log(`ok   ${name} (${doc.apiVersion})`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${name}: ${e.message}`);
  }
}
if (count === 0) {
  console.log("no objects on stdin");
  process.exit(2);
}
process.exit(failed ? 1 : 0);
