SELECT s."department_identifier", g."group_type", g."group_name", g."group_slug", g."group_description",
  s."learner_identifier", p."full_name",
  f."profile_identifier", f."profile_type", f."profile_name", f."profile_slug", f."profile_description",
  s."measurement_key", s."required", s."satisfied", s."expired", s."not_completed", s."not_applicable",
  s."needs_training", s."self_assessed", s."submitted", s."validated"
FROM "compliance_statuses" AS s
LEFT JOIN "groups" AS g ON g."group_identifier" = s."department_identifier"
LEFT JOIN "people" AS p ON p."user_identifier" = s."learner_identifier" AND p."organization_identifier" = s."organization_identifier"
LEFT JOIN "compliance_primary_profiles" AS l ON l."organization_identifier" = s."organization_identifier" AND l."learner_identifier" = s."learner_identifier"
LEFT JOIN "compliance_profiles" AS f ON f."profile_identifier" = l."profile_identifier"
WHERE s."profile_variant" = ?
  AND s."organization_identifier" = ?
  AND s."department_identifier" IN ?
  AND s."learner_identifier" IN ?
  AND s."measurement_key" IN ?
  AND EXISTS (SELECT 1 FROM "memberships" AS m WHERE m."user_identifier" = s."learner_identifier"
  AND m."group_identifier" = s."department_identifier" AND m."membership_function" IN ?)
  AND EXISTS (SELECT 1 FROM "compliance_statuses" AS x WHERE x."organization_identifier" = s."organization_identifier"
  AND x."profile_variant" = s."profile_variant" AND x."learner_identifier" = s."learner_identifier" AND x."required" > 0)
ORDER BY CASE WHEN p."full_name" IS NULL THEN 1 ELSE 0 END, p."full_name", s."learner_identifier", s."measurement_key",
  CASE WHEN g."group_name" IS NULL THEN 1 ELSE 0 END, g."group_name", s."department_identifier"
