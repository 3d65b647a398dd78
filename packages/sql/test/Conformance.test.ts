import { Layer } from "effect"
import { ConnectionRepo, Notifier, OrganizationRepo, PackageRepo, PackageStore, PermissionRepo, UserRepo, VersionRepo } from "@modelgate/core"
import { conformance } from "./Conformance.ts"
import { pgliteClient, serverClient, serverUrl, storageOn } from "./TestDatabase.ts"

conformance(
  "memory",
  Layer.mergeAll(
    ConnectionRepo.ConnectionRepo.layerMemory,
    VersionRepo.VersionRepo.layerMemory,
    PackageRepo.PackageRepo.layerMemory,
    PermissionRepo.PermissionRepo.layerMemory,
    OrganizationRepo.OrganizationRepo.layerMemory,
    UserRepo.UserRepo.layerMemory,
    PackageStore.PackageStore.layerMemory,
    Notifier.layerMemory
  )
)

conformance("PGlite", storageOn(pgliteClient))

if (serverUrl !== undefined) conformance("PostgreSQL server", storageOn(serverClient(serverUrl)))
