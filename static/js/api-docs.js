// The API's interactive docs (Swagger UI, vendored): reads the OpenAPI document the API serves.
window.addEventListener("DOMContentLoaded", () => {
  const root = document.getElementById("swagger-ui");
  window.SwaggerUIBundle({ url: root.dataset.schema, dom_id: "#swagger-ui", deepLinking: true, tryItOutEnabled: false });
});
