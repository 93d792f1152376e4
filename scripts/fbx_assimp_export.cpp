// assimp's own FBX exporter on a file koma wrote (scripts/fbx_writer_compare.py compiles and runs it:
// docs/fbx.md, "Choosing the writer"). Not part of koma.
#include <assimp/Exporter.hpp>
#include <assimp/Importer.hpp>
#include <assimp/scene.h>
#include <cstdio>
int main(int argc, char** argv) {
  if (argc != 4) { std::fprintf(stderr, "usage: assimp_export IN OUT FORMAT_ID (fbx | fbxa)\n"); return 2; }
  Assimp::Importer importer;
  const aiScene* scene = importer.ReadFile(argv[1], 0);
  if (!scene) { std::fprintf(stderr, "import failed: %s\n", importer.GetErrorString()); return 1; }
  Assimp::Exporter exporter;
  if (exporter.Export(scene, argv[3], argv[2]) != AI_SUCCESS) { std::fprintf(stderr, "export failed: %s\n", exporter.GetErrorString()); return 1; }
  return 0;
}
