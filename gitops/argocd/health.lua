-- Argo CD health check for HudiBucketTable (hudi.bucketops.io). It reads what the operator writes:
-- status.observedGeneration, status.phase and the kstatus conditions Ready, Reconciling and Stalled.
--
--   Progressing  no status yet, a spec change not yet seen (observedGeneration < generation), or a
--                plan or apply job running (Reconciling=True)
--   Degraded     Stalled=True: stuck until someone changes something; the message says what
--   Suspended    waiting for a person: a plan awaits approval (phase AwaitingApproval), or the table
--                is paused by annotation (phase Paused)
--   Healthy      Ready=True: the table's bucket layout matches the spec
--
-- Install it as argocd-cm's resource.customizations.health.hudi.bucketops.io_HudiBucketTable
-- (gitops/argocd/argocd-cm.yaml holds this same text).
local hs = {}

local function condition(status, kind)
  if status.conditions == nil then
    return nil
  end
  for _, c in ipairs(status.conditions) do
    if c.type == kind then
      return c
    end
  end
  return nil
end

local function message(c, fallback)
  if c ~= nil and c.message ~= nil and c.message ~= "" then
    return c.message
  end
  return fallback
end

local status = obj.status
if status == nil or status.conditions == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the operator to report a status"
  return hs
end

local generation = obj.metadata.generation
if generation ~= nil and status.observedGeneration ~= nil and status.observedGeneration < generation then
  hs.status = "Progressing"
  hs.message = "Waiting for the operator to reconcile generation " .. tostring(generation)
  return hs
end

local ready = condition(status, "Ready")
local stalled = condition(status, "Stalled")
if stalled ~= nil and stalled.status == "True" then
  hs.status = "Degraded"
  hs.message = message(stalled, "Stalled")
  return hs
end

if status.phase == "AwaitingApproval" or status.phase == "Paused" then
  hs.status = "Suspended"
  hs.message = message(ready, status.phase)
  return hs
end

if ready ~= nil and ready.status == "True" then
  hs.status = "Healthy"
  hs.message = message(ready, "Ready")
  return hs
end

local reconciling = condition(status, "Reconciling")
hs.status = "Progressing"
if reconciling ~= nil and reconciling.status == "True" then
  hs.message = message(reconciling, "Reconciling")
else
  hs.message = message(ready, "Waiting for the table to become Ready")
end
return hs
